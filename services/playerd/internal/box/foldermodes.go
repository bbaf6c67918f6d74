package box

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// FolderModesFile holds the play mode a parent set for each folder, by
// folder id; a folder without an entry plays normal.
const FolderModesFile = "folder_modes.json"

// maxFolderModes bounds the file: one entry per folder of a very large
// library.
const maxFolderModes = 100000

// ParseFolderModes decodes a folder modes document strictly and checks
// every mode; errors are fault.Invalid.
func ParseFolderModes(data []byte) (map[string]player.Mode, error) {
	var m map[string]player.Mode
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, fault.New(fault.Invalid, "not a folder modes document: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fault.New(fault.Invalid, "not a folder modes document: data after the object")
	}
	if len(m) > maxFolderModes {
		return nil, fault.New(fault.Invalid, "folder modes: at most %d folders", maxFolderModes)
	}
	for id, mode := range m {
		if id == "" || len(id) > 64 || !mode.Valid() {
			return nil, fault.New(fault.Invalid, "folder modes: %q → %q is not a folder id and a mode (one of %v)", id, mode, player.Modes)
		}
	}
	if m == nil {
		m = map[string]player.Mode{}
	}
	return m, nil
}

// CheckFolderModes is ParseFolderModes for a backup's check.
func CheckFolderModes(data []byte) error {
	_, err := ParseFolderModes(data)
	return err
}

// modeStore is the parents' folder modes. Every change is on disk before
// it is used, and then told (changed); readers get the map without a lock
// (the player asks in its goroutine at each folder start).
type modeStore struct {
	dir     string
	changed func()
	mu      sync.Mutex // one change at a time
	cur     atomic.Pointer[map[string]player.Mode]
}

func (s *modeStore) path() string { return filepath.Join(s.dir, FolderModesFile) }

// all is the current map; treat it as read-only.
func (s *modeStore) all() map[string]player.Mode {
	if m := s.cur.Load(); m != nil {
		return *m
	}
	return nil
}

func (s *modeStore) of(id string) player.Mode { return s.all()[id] }

// load reads the file at start; a missing one is no modes set.
func (s *modeStore) load() error {
	m := map[string]player.Mode{}
	defer func() { s.cur.Store(&m) }()
	data, err := readFile(s.path())
	if err != nil || data == nil {
		return err
	}
	parsed, err := ParseFolderModes(data)
	if err != nil {
		return err
	}
	m = parsed
	return nil
}

// reload reads the file after a restore replaced it.
func (s *modeStore) reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.load()
	s.changed()
	return err
}

// change writes the map edit makes of a copy of the current one, then uses
// it; an edit that changes nothing writes nothing and tells nobody.
func (s *modeStore) change(edit func(map[string]player.Mode) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := maps.Clone(s.all())
	if m == nil {
		m = map[string]player.Mode{}
	}
	if !edit(m) {
		return nil
	}
	if err := state.WriteJSON(s.path(), m); err != nil {
		return err
	}
	s.cur.Store(&m)
	s.changed()
	return nil
}

// set stores folder id's mode; normal is stored as no entry.
func (s *modeStore) set(id string, mode player.Mode) error {
	return s.change(func(m map[string]player.Mode) bool {
		if m[id] == mode || (mode == player.ModeNormal && m[id] == "") {
			return false
		}
		if mode == player.ModeNormal {
			delete(m, id)
		} else {
			m[id] = mode
		}
		return true
	})
}

// moved makes the modes follow renamed folders and forget deleted ones.
func (s *modeStore) moved(moves map[string]library.Move) error {
	return s.change(func(m map[string]player.Mode) bool {
		changed := false
		for old, mv := range moves {
			mode, ok := m[old]
			if !ok {
				continue
			}
			delete(m, old)
			if mv.NewID != "" {
				m[mv.NewID] = mode
			}
			changed = true
		}
		return changed
	})
}

// read is the file as a backup holds it; nil when no mode was set.
func (s *modeStore) read() ([]byte, error) {
	m := s.all()
	if len(m) == 0 {
		return nil, nil
	}
	return jsonFile(m)
}

// FolderModes is the mode a parent set for each folder that is not
// normal, by folder id; treat it as read-only.
func (b *Box) FolderModes() map[string]player.Mode { return b.modes.all() }

// SetFolderMode sets the mode a folder plays in when it starts. The folder
// must exist; the mode is saved before it is used, and applies from the
// folder's next start (a command changes the queue playing).
func (b *Box) SetFolderMode(id string, mode player.Mode) error {
	if !mode.Valid() {
		return fault.New(fault.Invalid, "unknown mode %q (one of %v)", mode, player.Modes).Coded("unknown_mode")
	}
	if _, ok := b.catalog.Folder(id); !ok {
		return fault.New(fault.NotFound, "no folder %q", id)
	}
	return b.modes.set(id, mode)
}

func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}
