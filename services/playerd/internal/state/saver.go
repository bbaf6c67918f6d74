package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// FileName is the player state file inside the data directory.
const FileName = "state.json"

// Load reads the saved player state. A missing file is a first start; a
// corrupt one is reported (for the log) and replaced by defaults.
func Load(dataDir string) (Saved, error) {
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

// Saver writes the state in its own goroutine, so the player never waits for
// the SD card. Only the newest pending state is written.
type Saver struct {
	path    string
	pending chan Saved
	done    chan struct{}
	onError func(error)
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
	if err := WriteJSON(sv.path, s); err != nil && sv.onError != nil {
		sv.onError(fmt.Errorf("save player state: %w", err))
	}
}
