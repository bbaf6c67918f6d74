// Package measure measures the loudness of every track of the library in
// the background and keeps the results with the library cache: by
// content, so that a rename or a rescan measures nothing again, on disk
// so that they survive restarts. Its Store answers the player's lookups
// (loudness.Lookup) from memory, never waiting for a measurement.
package measure

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/storybox/storybox/services/playerd/internal/loudness"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// storeVersion is the layout of the results file; a file of another
// version is measured anew.
const storeVersion = 1

// disk is the results file.
type disk struct {
	Version int                        `json:"version"`
	Tracks  map[string]loudness.Result `json:"tracks"`           // by content key
	Failed  map[string]string          `json:"failed,omitempty"` // content key → why it cannot be measured
}

// Progress is how much of the library is measured: "measured N of M".
type Progress struct {
	Measured  int  `json:"measured"`  // files with a result
	Failed    int  `json:"failed"`    // files that cannot be measured (and cannot be played)
	Total     int  `json:"total"`     // audio files of the library
	Measuring bool `json:"measuring"` // a file is being measured now
}

// Store holds the results: by content key on disk, and by path and folder
// as the library is now, for lookups.
type Store struct {
	path string

	mu       sync.RWMutex
	tracks   map[string]loudness.Result
	failed   map[string]string
	byPath   map[string]string   // absolute file path (and chapter path) → key
	folders  map[string][]string // folder id → its files' keys
	combined map[string]loudness.Result
	progress Progress
	dirty    bool
	puts     atomic.Int64  // files measured by this process, for tests
	changed  chan struct{} // closed at the next change of progress; nil until asked for
}

// Open reads the results at path (a missing or unreadable file starts
// empty: it costs measuring again, nothing else).
func Open(path string) *Store {
	s := &Store{path: path, tracks: map[string]loudness.Result{}, failed: map[string]string{},
		byPath: map[string]string{}, folders: map[string][]string{}, combined: map[string]loudness.Result{}}
	if path == "" {
		return s
	}
	var d disk
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &d) == nil && d.Version == storeVersion {
		if d.Tracks != nil {
			s.tracks = d.Tracks
		}
		if d.Failed != nil {
			s.failed = d.Failed
		}
	}
	return s
}

var _ loudness.Lookup = (*Store)(nil)

// Track is the result of the file at path (a chapter's path gives its
// file's), if it is measured.
func (s *Store) Track(path string) (loudness.Result, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	key, ok := s.byPath[path]
	if !ok {
		return loudness.Result{}, false
	}
	r, ok := s.tracks[key]
	return r, ok
}

// Folder is a folder's result, gated over all its tracks' blocks, once
// every track of it that can be measured is.
func (s *Store) Folder(id string) (loudness.Result, bool) {
	s.mu.RLock()
	r, ok := s.combined[id]
	keys, known := s.folders[id]
	s.mu.RUnlock()
	if ok || !known {
		return r, ok
	}
	var rs []loudness.Result
	for _, k := range keys {
		s.mu.RLock()
		r, ok := s.tracks[k]
		_, bad := s.failed[k]
		s.mu.RUnlock()
		switch {
		case ok:
			rs = append(rs, r)
		case !bad:
			return loudness.Result{}, false
		}
	}
	if len(rs) == 0 {
		return loudness.Result{}, false
	}
	r = loudness.Combine(rs...)
	s.mu.Lock()
	if slices.Equal(s.folders[id], keys) { // not replaced by a new view meanwhile
		s.combined[id] = r
	}
	s.mu.Unlock()
	return r, true
}

// Progress is the measurement's progress.
func (s *Store) Progress() Progress {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.progress
}

// Changed returns a channel closed at the next change of Progress.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// told closes the changed channel; s.mu is held.
func (s *Store) told() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// view replaces the library as the lookups see it: each file's key by
// path, each folder's keys; results of keys no longer in the library are
// forgotten. It returns the keys without a result.
func (s *Store) view(files map[string]string, folders map[string][]string) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byPath, s.folders, s.combined = files, folders, map[string]loudness.Result{}
	in := map[string]bool{}
	for _, k := range files {
		in[k] = true
	}
	for k := range s.tracks {
		if !in[k] {
			delete(s.tracks, k)
			s.dirty = true
		}
	}
	for k := range s.failed {
		if !in[k] {
			delete(s.failed, k)
			s.dirty = true
		}
	}
	todo := map[string]bool{}
	for k := range in {
		_, done := s.tracks[k]
		_, bad := s.failed[k]
		if !done && !bad {
			todo[k] = true
		}
	}
	s.progress = Progress{Measured: len(s.tracks), Failed: len(s.failed), Total: len(in)}
	s.told()
	return todo
}

// measuring sets whether a file is being measured.
func (s *Store) measuring(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.progress.Measuring != on {
		s.progress.Measuring = on
		s.told()
	}
}

// put keeps the result of key, or why it cannot be measured.
func (s *Store) put(key string, r loudness.Result, failure error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if failure != nil {
		s.failed[key] = failure.Error()
		s.progress.Failed++
	} else {
		s.tracks[key] = r
		s.progress.Measured++
	}
	for id, keys := range s.folders {
		if slices.Contains(keys, key) {
			delete(s.combined, id)
		}
	}
	s.dirty = true
	s.puts.Add(1)
	s.told()
}

// save writes the results if they changed, replacing the file atomically
// (state.WriteFile), so a power cut leaves the old or the new one.
func (s *Store) save() error {
	s.mu.Lock()
	if !s.dirty || s.path == "" {
		s.mu.Unlock()
		return nil
	}
	// A copy is encoded, outside the lock: lookups never wait for it.
	d := disk{Version: storeVersion, Tracks: maps.Clone(s.tracks), Failed: maps.Clone(s.failed)}
	s.dirty = false
	s.mu.Unlock()
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	if err := state.WriteFile(s.path, b); err != nil {
		s.mu.Lock()
		s.dirty = true
		s.mu.Unlock()
		return fmt.Errorf("measure: %w", err)
	}
	return nil
}
