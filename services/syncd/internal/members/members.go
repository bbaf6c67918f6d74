// Package members keeps what a parent decided about the household on this
// box: the other boxes added and which media folders are shared. It is
// one JSON file under /perm, written atomically (temporary file, fsync,
// rename, fsync of the directory), so a power cut keeps either the old or
// the new household, never a torn one and never one answered but lost.
package members

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/storybox/storybox/services/internal/atomicfile"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/syncapi"
	"github.com/storybox/storybox/services/syncd/internal/stconf"
)

// MaxBoxes bounds the household: Syncthing keeps a connection and an
// index per device, and a household of more than a few boxes is a
// kindergarten's, which this box is not made for.
const MaxBoxes = 8

// MaxFolders bounds the media folders chosen by name.
const MaxFolders = 256

// Box is another box of the household.
type Box struct {
	DeviceID string `json:"device_id"`
	Name     string `json:"name"`
	Address  string `json:"address"`
}

type file struct {
	Boxes []Box         `json:"boxes"`
	Media syncapi.Media `json:"media"`
}

// Store is the household on this box. Safe for concurrent use.
type Store struct {
	path string
	mu   sync.Mutex
	f    file
}

// Open reads the household from dir/household.json; a missing file is a
// box alone that shares all media once it has company.
func Open(dir string) (*Store, error) {
	s := &Store{path: filepath.Join(dir, "household.json"), f: file{Media: syncapi.Media{All: true}}}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "household")
	}
	if err := json.Unmarshal(b, &s.f); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "household "+s.path)
	}
	return s, nil
}

// Boxes are the other boxes, in the order they were added.
func (s *Store) Boxes() []Box {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.f.Boxes)
}

// Media is which media folders are shared.
func (s *Store) Media() syncapi.Media {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.f.Media
	m.Folders = slices.Clone(m.Folders)
	if m.Folders == nil {
		m.Folders = []string{}
	}
	return m
}

// CheckBox refuses what Syncthing could not take or the page could not
// show, as fault.Invalid.
func CheckBox(b Box, self string) error {
	if err := stconf.CheckDeviceID(b.DeviceID); err != nil {
		return fault.New(fault.Invalid, "%v", err).Coded("household_bad_device")
	}
	if b.DeviceID == self {
		return fault.New(fault.Invalid, "that is this box itself").Coded("household_self")
	}
	if b.Name == "" || len(b.Name) > 63 || strings.IndexFunc(b.Name, unicode.IsControl) >= 0 {
		return fault.New(fault.Invalid, "box name %q: want 1 to 63 bytes without control characters", b.Name).Coded("household_bad_name")
	}
	if err := stconf.CheckAddress(b.Address); err != nil {
		return fault.New(fault.Invalid, "%v", err).Coded("household_bad_address")
	}
	return nil
}

// Add adds b, or updates the name and address of the box with its id;
// changed is false when nothing changed.
func (s *Store) Add(b Box, self string) (changed bool, err error) {
	if b.Address == "" {
		b.Address = "dynamic"
	}
	if err := CheckBox(b, self); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.f
	next.Boxes = slices.Clone(s.f.Boxes)
	i := slices.IndexFunc(next.Boxes, func(o Box) bool { return o.DeviceID == b.DeviceID })
	switch {
	case i >= 0 && next.Boxes[i] == b:
		return false, nil
	case i >= 0:
		next.Boxes[i] = b
	case len(next.Boxes) >= MaxBoxes:
		return false, fault.New(fault.Conflict, "a household has at most %d other boxes", MaxBoxes).Coded("household_full")
	default:
		next.Boxes = append(next.Boxes, b)
	}
	return true, s.save(next)
}

// Remove takes the box with id out of the household.
func (s *Store) Remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.f.Boxes, func(o Box) bool { return o.DeviceID == id })
	if i < 0 {
		return fault.New(fault.NotFound, "no box %s in the household", id).Coded("household_no_box")
	}
	next := s.f
	next.Boxes = slices.Delete(slices.Clone(s.f.Boxes), i, i+1)
	return s.save(next)
}

// SetMedia chooses the shared media folders: all, or the top-level
// folders named.
func (s *Store) SetMedia(m syncapi.Media) error {
	if m.All {
		m.Folders = nil
	}
	if len(m.Folders) > MaxFolders {
		return fault.New(fault.Invalid, "at most %d folders", MaxFolders).Coded("household_bad_folder")
	}
	seen := map[string]bool{}
	for _, f := range m.Folders {
		if err := CheckFolderName(f); err != nil {
			return err
		}
		if seen[f] {
			return fault.New(fault.Invalid, "folder %q named twice", f).Coded("household_bad_folder")
		}
		seen[f] = true
	}
	slices.Sort(m.Folders)
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.f
	next.Media = m
	return s.save(next)
}

// CheckFolderName accepts a top-level folder of the library: one path
// element, not hidden, nothing Syncthing's ignore patterns would read as
// a pattern.
func CheckFolderName(f string) error {
	if f == "" || f == "." || f == ".." || strings.HasPrefix(f, ".") || len(f) > 255 ||
		strings.ContainsAny(f, "/\\*?[]{}!#") || strings.IndexFunc(f, unicode.IsControl) >= 0 || strings.TrimSpace(f) != f {
		return fault.New(fault.Invalid, "folder %q: want the name of a top-level folder of the library", f).Coded("household_bad_folder")
	}
	return nil
}

// save writes next and makes it current; s.mu held.
func (s *Store) save(next file) error {
	b, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return fault.Wrap(fault.Internal, err, "household")
	}
	if err := WriteFile(s.path, b, 0o600); err != nil {
		return fault.Wrap(fault.Internal, err, "saving the household")
	}
	s.f = next
	return nil
}

// WriteFile writes data to path atomically with mode perm, making its
// directory (0700) when missing.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return atomicfile.Write(path, data, perm)
}
