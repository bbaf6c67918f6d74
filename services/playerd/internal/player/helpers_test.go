package player

import (
	"cmp"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// recSink records what reaches the "speaker". perWrite slows it down so
// commands land while a track plays; fail makes Write fail.
type recSink struct {
	rate     int // 0: output.DefaultRate
	mu       sync.Mutex
	frames   [][2]float64
	drops    int
	drains   int
	perWrite time.Duration
	fail     error
	closed   bool
}

func (s *recSink) Write(f [][2]float64) error {
	s.mu.Lock()
	if s.fail != nil {
		err := s.fail
		s.mu.Unlock()
		return err
	}
	s.frames = append(s.frames, f...)
	d := s.perWrite
	s.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
	return nil
}
func (s *recSink) Rate() int    { return cmp.Or(s.rate, output.DefaultRate) }
func (s *recSink) Drop() error  { s.mu.Lock(); s.drops++; s.mu.Unlock(); return nil }
func (s *recSink) Drain() error { s.mu.Lock(); s.drains++; s.mu.Unlock(); return nil }
func (s *recSink) Close() error { s.mu.Lock(); s.closed = true; s.mu.Unlock(); return nil }

func (s *recSink) heard() [][2]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][2]float64(nil), s.frames...)
}

// writeLevelWAV writes a 48 kHz stereo WAV whose left channel holds the
// constant level and whose right channel counts samples modulo 1000 (scaled),
// so tests can tell tracks apart and see exactly which sample was heard.
func writeLevelWAV(t *testing.T, path string, seconds float64, level int16) {
	t.Helper()
	writeLevelWAVAt(t, path, output.DefaultRate, seconds, level)
}

// writeLevelWAVAt is writeLevelWAV at another rate.
func writeLevelWAVAt(t *testing.T, path string, rate int, seconds float64, level int16) {
	t.Helper()
	frames := make([][2]int16, int(seconds*float64(rate)))
	for i := range frames {
		frames[i] = [2]int16{level, int16(i % 1000 * 30)}
	}
	if err := os.WriteFile(path, testmedia.WAV(rate, frames), 0o644); err != nil {
		t.Fatal(err)
	}
}

// catalog is a fake library.
type catalog map[string]library.Folder

func (c catalog) Folder(id string) (library.Folder, bool) { f, ok := c[id]; return f, ok }

// folderOf builds a folder of WAV tracks with the given lengths; a negative
// length writes a file that cannot be decoded.
func folderOf(t *testing.T, id string, seconds ...float64) library.Folder {
	t.Helper()
	dir := t.TempDir()
	f := library.Folder{ID: id, Name: "Folder " + id}
	for i, s := range seconds {
		p := filepath.Join(dir, string(rune('a'+i))+".wav")
		if s < 0 {
			if err := os.WriteFile(p, []byte("not audio"), 0o644); err != nil {
				t.Fatal(err)
			}
			s = 0
		} else {
			writeLevelWAV(t, p, s, int16(1000*(i+1)))
		}
		f.Tracks = append(f.Tracks, library.Track{ID: id + string(rune('a'+i)), Title: "Track " + string(rune('A'+i)), Duration: s, Path: p})
	}
	return f
}

type harness struct {
	t       *testing.T
	p       *Player
	sink    *recSink
	saved   chan state.Saved
	mu      sync.Mutex
	urgency []state.Urgency // of every Save, in order
	cancel  context.CancelFunc
	done    chan error
	once    sync.Once
}

func newHarness(t *testing.T, cat catalog, cfg Config, sink *recSink) *harness {
	t.Helper()
	h := &harness{t: t, sink: sink, saved: make(chan state.Saved, 1000), done: make(chan error, 1)}
	if cfg.Open == nil {
		cfg.Open = func(int) (output.Sink, error) { return sink, nil }
	}
	cfg.Catalog = cat
	if cfg.MaxVolume == 0 {
		cfg.MaxVolume = 100
	}
	if cfg.StartVolume == 0 {
		cfg.StartVolume = 100
	}
	cfg.Save = func(s state.Saved, u state.Urgency) {
		h.mu.Lock()
		h.urgency = append(h.urgency, u)
		h.mu.Unlock()
		select {
		case h.saved <- s:
		default:
		}
	}
	h.p = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.p.Run(ctx) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	h.once.Do(func() {
		h.cancel()
		select {
		case <-h.done:
		case <-time.After(5 * time.Second):
			h.t.Error("player did not stop")
		}
	})
}

func (h *harness) do(c Command) Status {
	h.t.Helper()
	st, err := h.p.Do(context.Background(), c)
	if err != nil {
		h.t.Fatalf("%s: %v", c.Action, err)
	}
	return st
}

func (h *harness) fails(c Command, want error) string {
	h.t.Helper()
	_, err := h.p.Do(context.Background(), c)
	if !errors.Is(err, want) {
		h.t.Fatalf("%s: err = %v, want %v", c.Action, err, want)
	}
	return err.Error()
}

// waitFor polls the status until cond holds.
func (h *harness) waitFor(what string, cond func(Status) bool) Status {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := h.p.Status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; status %+v", what, st)
		}
		select {
		case <-h.p.Changed():
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func val(v float64) *float64 { return &v }
func idx(i int) *int         { return &i }

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
