// Package library scans the media directory into folders and tracks, and
// serves their covers.
package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/storybox/storybox/services/internal/fault"
)

// ErrNotFound reports an unknown folder id or a folder without a cover.
var ErrNotFound = fault.New(fault.NotFound, "not found")

// Library is the scanned media directory. It is safe for concurrent use; a
// rescan replaces the whole view at once.
type Library struct {
	root      string
	cachePath string

	mu       sync.RWMutex
	changed  chan struct{} // closed when a scan replaced the view; nil until asked for
	folders  []Folder
	byID     map[string]int
	topLevel []string
	scanned  bool
	stats    Stats
	problems []Problem
	scanMu   sync.Mutex // one scan at a time

	progMu     sync.Mutex
	progress   Progress
	progressed chan struct{} // closed when progress changes; nil until asked for
	gate       <-chan struct{}

	manage chan struct{} // held by a change of the media directory (manage.go)
	limits Limits
	edited func() // told of every change made through the library (manage.go, upload.go)
}

// Problem is a file the last scan could not use: left out when it cannot
// be played, listed without tags when only those are unreadable.
type Problem struct {
	Path  string `json:"path"` // below the media root
	Error string `json:"error"`
}

// Report is the state of the library for /api/info.
type Report struct {
	Scanned  bool      `json:"scanned"` // false until the first full scan is done
	Folders  int       `json:"folders"`
	Tracks   int       `json:"tracks"`
	Skipped  int       `json:"skipped"`
	Problems []Problem `json:"problems"` // at most 100
}

// New prepares a library of root; cachePath (may be empty) keeps tag and
// duration results between scans. edited (nil: nobody) hears of every
// change made through the library (a folder created, renamed or deleted,
// an upload, a cover), once its view shows it; a scan is told by Changed.
func New(root, cachePath string, edited func()) *Library {
	if edited == nil {
		edited = func() {}
	}
	return &Library{root: root, cachePath: cachePath, byID: map[string]int{}, manage: make(chan struct{}, 1), limits: DefaultLimits(), edited: edited}
}

// ID derives the stable id of a path relative to the media root: the first
// 16 bytes of its SHA-256, as the real box does.
func ID(rel string) string {
	sum := sha256.Sum256([]byte(filepath.ToSlash(rel)))
	return hex.EncodeToString(sum[:16])
}

// Folders returns the folders in natural order of their paths.
func (l *Library) Folders() []Folder {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.folders
}

// Changed returns a channel that is closed when the next scan has replaced
// the view (Folders, Report), whoever started it.
func (l *Library) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// Scanned reports whether a scan has completed.
func (l *Library) Scanned() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.scanned
}

// Folder looks a folder up by id.
func (l *Library) Folder(id string) (Folder, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	i, ok := l.byID[id]
	if !ok {
		return Folder{}, false
	}
	return l.folders[i], true
}

// TopLevel returns the names of the media root's visible subdirectories at
// the last scan, the default home-screen categories.
func (l *Library) TopLevel() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.topLevel
}

func topLevel(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if !hidden(e.Name()) && e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		if naturalLess(a, b) {
			return -1
		}
		return 1
	})
	return names
}

// Root is the media directory.
func (l *Library) Root() string { return l.root }

// Report returns the outcome of the last scan.
func (l *Library) Report() Report {
	l.mu.RLock()
	defer l.mu.RUnlock()
	p := l.problems
	if p == nil {
		p = []Problem{}
	}
	return Report{Scanned: l.scanned, Folders: l.stats.Folders, Tracks: l.stats.Tracks, Skipped: l.stats.Skipped, Problems: p}
}

// Scan reads the media directory again. Files whose size and modification
// time did not change are not read again.
func (l *Library) Scan() (Stats, error) { return l.ScanContext(context.Background()) }

// ScanContext is Scan, ended early when ctx is; the view then stays as it
// was.
func (l *Library) ScanContext(ctx context.Context) (Stats, error) { return l.scan(ctx, false) }

// ScanCached builds the view from the scan cache alone, reading no media
// file and trusting the cache for files whose names it knows, in the time
// a directory walk takes (none without a cache): the box can serve and
// resume at once while the full scan runs. Scanned stays false.
func (l *Library) ScanCached() (Stats, error) { return l.scan(context.Background(), true) }

func (l *Library) scan(ctx context.Context, cachedOnly bool) (Stats, error) {
	l.scanMu.Lock()
	defer l.scanMu.Unlock()
	c := loadCache(l.cachePath)
	var progress func(found, done int)
	end := func() {}
	if !cachedOnly {
		l.setProgress(Progress{Scanning: true})
		progress = func(found, done int) { l.setProgress(Progress{Scanning: true, Done: done, Total: found}) }
		ended := false
		end = func() {
			if !ended {
				ended = true
				p := l.Progress()
				p.Scanning = false
				l.setProgress(p)
			}
		}
		defer end() // a failed scan ends too
	}
	s := &scanner{} // never scanned: the quick view has nothing to show
	if !cachedOnly || len(c.Files) > 0 {
		var err error
		if s, err = scan(ctx, l.root, c, cachedOnly, progress, l.gate); err != nil {
			return Stats{}, fmt.Errorf("library: %w", err)
		}
	}
	folders, stats := s.folders, s.stats
	byID := make(map[string]int, len(folders))
	for i, f := range folders {
		byID[f.ID] = i
	}
	top := topLevel(l.root)
	l.mu.Lock()
	l.folders, l.byID, l.topLevel, l.stats, l.problems = folders, byID, top, stats, s.problems
	l.scanned = l.scanned || !cachedOnly
	end() // with the new view, so whoever sees the scan ended sees it
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	l.mu.Unlock()
	if !cachedOnly && l.cachePath != "" && (stats.Read > 0 || stats.Gone > 0) {
		if err := c.save(l.cachePath); err != nil {
			return stats, fmt.Errorf("library: %w", err)
		}
	}
	return stats, nil
}

// HoldReads makes scans wait with their first file read until gate is
// closed, after walking the directories: tests look at a box whose scan is
// in progress with it. Call it before the first scan.
func (l *Library) HoldReads(gate <-chan struct{}) { l.gate = gate }

// Progress is how far the running scan has got, or the last one got.
// The quick view from the cache at start is not a scan here.
type Progress struct {
	Scanning bool `json:"scanning"`
	Done     int  `json:"done"`  // audio files whose tags and duration are known
	Total    int  `json:"total"` // audio files found so far
}

// Progress returns the progress of the running or last scan.
func (l *Library) Progress() Progress {
	l.progMu.Lock()
	defer l.progMu.Unlock()
	return l.progress
}

// Progressed returns a channel that is closed when the progress changes:
// a scan starts, gets further or ends.
func (l *Library) Progressed() <-chan struct{} {
	l.progMu.Lock()
	defer l.progMu.Unlock()
	if l.progressed == nil {
		l.progressed = make(chan struct{})
	}
	return l.progressed
}

// setProgress keeps the furthest count: parallel reads report out of
// order.
func (l *Library) setProgress(p Progress) {
	l.progMu.Lock()
	defer l.progMu.Unlock()
	if p.Scanning && l.progress.Scanning {
		p.Done, p.Total = max(p.Done, l.progress.Done), max(p.Total, l.progress.Total)
	}
	l.progress = p
	if l.progressed != nil {
		close(l.progressed)
		l.progressed = nil
	}
}

// Stats counts what a scan found.
type Stats struct {
	Folders int `json:"folders"`
	Tracks  int `json:"tracks"`
	Read    int `json:"read"`    // files whose tags were read (not cached)
	Skipped int `json:"skipped"` // unplayable files and refused links
	// Problems counts files that cannot be played or whose tags cannot be
	// read (Report lists them).
	Problems int `json:"problems"`
	Gone     int `json:"-"` // cache entries of files that disappeared
}
