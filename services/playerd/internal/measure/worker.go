package measure

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/loudness"
)

// Config is what the worker measures and whom it yields to.
type Config struct {
	Library *library.Library
	Store   *Store
	// Activity reports the player: whether it plays, and a count that
	// moves whenever a track is opened or the position jumps
	// (player.Status's State and Jumps). Nil: always idle.
	Activity func() (playing bool, starts uint64)
	// OnError hears of results that could not be saved (nil: nobody);
	// measuring goes on, and the next save tries again.
	OnError func(error)
}

// The pacing policy. Measuring never competes with the start of a play:
// after the player opens a track or jumps, it waits holdOff before its
// next chunk; it takes no file while a scan reads the library; while
// something plays it measures at most a duty share of the time, sleeping
// between chunks of about 100 ms of audio; idle, it runs at full speed
// on its low-priority thread (lowerPriority).
const (
	holdOff   = 3 * time.Second
	duty      = 0.2
	saveEvery = 10 * time.Second
)

// errRestart ends a pass when the library changed under it, so an upload
// is measured first instead of after the rest of the library.
var errRestart = errors.New("measure: library changed")

// Worker measures the library in the background.
type Worker struct {
	cfg       Config
	lastStart uint64
	startSeen time.Time
	lastSave  time.Time
}

// New returns a worker; Run runs it.
func New(cfg Config) *Worker {
	if cfg.Activity == nil {
		cfg.Activity = func() (bool, uint64) { return false, 0 }
	}
	if cfg.OnError == nil {
		cfg.OnError = func(error) {}
	}
	return &Worker{cfg: cfg}
}

// Run measures every track not yet measured after each scan (the first
// one included, and the rescan that follows an upload), until ctx ends;
// the results are saved on the way out.
func (w *Worker) Run(ctx context.Context) {
	if err := lowerPriority(); err != nil {
		w.cfg.OnError(fmt.Errorf("measure: lower priority: %w", err))
	}
	lib := w.cfg.Library
	for {
		changed := lib.Changed()
		if lib.Scanned() {
			err := w.pass(ctx, changed)
			if err := w.cfg.Store.save(); err != nil {
				w.cfg.OnError(err)
			}
			if errors.Is(err, errRestart) {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// job is one file to measure.
type job struct {
	file, key string
	mtime     time.Time
}

// pass brings the store's view up to the library and measures what is
// new, newest first (an upload before the backlog).
func (w *Worker) pass(ctx context.Context, changed <-chan struct{}) error {
	files := map[string]string{}
	folders := map[string][]string{}
	jobs := map[string]job{}
	for _, f := range w.cfg.Library.Folders() {
		var keys []string
		for _, t := range f.Tracks {
			if t.Path == "" {
				continue
			}
			file := decode.ChapterFile(t.Path)
			key, ok := files[file]
			if !ok {
				fi, err := os.Stat(file)
				if err != nil {
					continue // gone since the scan; the next scan tells
				}
				key = contentKey(fi)
				files[file] = key
				jobs[key] = job{file: file, key: key, mtime: fi.ModTime()}
			}
			files[t.Path] = key
			if !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
		}
		folders[f.ID] = keys
	}
	todo := w.cfg.Store.view(files, folders)
	queue := make([]job, 0, len(todo))
	for k := range todo {
		queue = append(queue, jobs[k])
	}
	slices.SortFunc(queue, func(a, b job) int { return cmp.Or(b.mtime.Compare(a.mtime), cmp.Compare(a.file, b.file)) })
	for _, j := range queue {
		if err := w.between(ctx, changed); err != nil {
			return err
		}
		r, err := w.measure(ctx, changed, j.file)
		if ctx.Err() != nil || errors.Is(err, errRestart) {
			w.cfg.Store.measuring(false)
			return cmp.Or(ctx.Err(), err)
		}
		w.cfg.Store.put(j.key, r, err)
		if time.Since(w.lastSave) > saveEvery {
			w.lastSave = time.Now()
			if err := w.cfg.Store.save(); err != nil {
				w.cfg.OnError(err)
			}
		}
	}
	w.cfg.Store.measuring(false)
	return nil
}

// between waits, before a file, until no scan reads the library.
func (w *Worker) between(ctx context.Context, changed <-chan struct{}) error {
	lib := w.cfg.Library
	for {
		progressed := lib.Progressed()
		if !lib.Progress().Scanning {
			return nil
		}
		w.cfg.Store.measuring(false)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
			return errRestart
		case <-progressed:
		}
	}
}

func (w *Worker) measure(ctx context.Context, changed <-chan struct{}, file string) (loudness.Result, error) {
	w.cfg.Store.measuring(true)
	s, format, err := decode.Open(file)
	if err != nil {
		return loudness.Result{}, err
	}
	defer s.Close()
	last := time.Now()
	return loudness.Measure(s, format, func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
			return errRestart
		default:
		}
		now := time.Now()
		spent := now.Sub(last)
		for {
			playing, starts := w.cfg.Activity()
			if starts != w.lastStart {
				w.lastStart, w.startSeen = starts, now
			}
			wait := pause(now, spent, playing, w.startSeen)
			if wait <= 0 {
				break
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-changed:
				t.Stop()
				return errRestart
			case <-t.C:
			}
			now, spent = time.Now(), 0 // the duty share is served; a new start still holds off
		}
		last = time.Now()
		return nil
	})
}

// pause is how long to wait before the next chunk: until holdOff after
// the last start seen, and while playing, long enough that the last
// chunk's work (spent) is at most the duty share of the time.
func pause(now time.Time, spent time.Duration, playing bool, startSeen time.Time) time.Duration {
	if d := startSeen.Add(holdOff).Sub(now); d > 0 {
		return d
	}
	if playing {
		return time.Duration(float64(spent) * (1 - duty) / duty)
	}
	return 0
}
