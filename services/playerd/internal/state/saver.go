package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// FileName is the player state file inside the data directory.
const FileName = "state.json"

// Load reads the saved player state. A missing file is a first start; a
// corrupt one is reported (for the log) and replaced by defaults.
// Temporary files that interrupted writes left in dataDir are removed, so
// they cannot fill the disk over many power cuts.
func Load(dataDir string) (Saved, error) {
	removeTemps(dataDir)
	var s Saved
	err := ReadJSON(filepath.Join(dataDir, FileName), &s)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil {
		s = Saved{}
	}
	if s.Resume == nil {
		s.Resume = map[string]ResumePoint{}
	}
	return s, err
}

func removeTemps(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if IsTemp(e.Name()) && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Saver writes the state in its own goroutine, so the player never waits for
// the SD card. Only the newest pending state is written.
type Saver struct {
	path    string
	pending chan Saved
	done    chan struct{}
	onError func(error)

	mu    sync.Mutex
	err   error     // the last write's failure; nil after a success
	since time.Time // first failure since the last success; zero while ok
}

// NewSaver writes to dataDir/state.json; onError reports failed writes.
func NewSaver(dataDir string, onError func(error)) *Saver {
	return &Saver{
		path:    filepath.Join(dataDir, FileName),
		pending: make(chan Saved, 1),
		done:    make(chan struct{}),
		onError: onError,
	}
}

// Save queues s, replacing a state that was not written yet. It never blocks.
func (sv *Saver) Save(s Saved) {
	for {
		select {
		case sv.pending <- s:
			return
		default:
		}
		select {
		case <-sv.pending:
		default:
		}
	}
}

// Run writes queued states until ctx ends, then writes the last one.
func (sv *Saver) Run(ctx context.Context) {
	defer close(sv.done)
	for {
		select {
		case s := <-sv.pending:
			sv.write(s)
		case <-ctx.Done():
			return
		}
	}
}

// Flush writes a state that is still queued; call it after the player has
// stopped and Run has returned.
func (sv *Saver) Flush() {
	<-sv.done
	select {
	case s := <-sv.pending:
		sv.write(s)
	default:
	}
}

func (sv *Saver) write(s Saved) {
	err := WriteJSON(sv.path, s)
	sv.mu.Lock()
	prev := sv.err
	switch {
	case err == nil:
		sv.since = time.Time{}
	case prev == nil:
		sv.since = time.Now()
	}
	sv.err = err
	sv.mu.Unlock()
	// Once per outage and per kind of failure: a full disk fails every
	// save, and gokrazy keeps only 100 log lines.
	if err != nil && sv.onError != nil && (prev == nil || Problem(prev) != Problem(err)) {
		sv.onError(fmt.Errorf("save player state: %w", err))
	}
}

// Err reports whether the newest state is on disk: nil once a write
// succeeded, else the last write's error and when writes began to fail.
func (sv *Saver) Err() (since time.Time, err error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.since, sv.err
}

// Problem says in a few words why a write failed, for people and API
// clients: the storage's condition, never a path.
func Problem(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "storage is full"
	case errors.Is(err, syscall.EROFS):
		return "storage is read-only"
	case errors.Is(err, syscall.EIO):
		return "storage read/write error"
	case errors.Is(err, fs.ErrPermission):
		return "no permission to write to the storage"
	}
	return "writing to the storage failed"
}
