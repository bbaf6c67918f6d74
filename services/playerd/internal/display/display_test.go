package display

import (
	"context"
	"errors"
	"image"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// fakeScreen counts the frames it is shown.
type fakeScreen struct {
	mu     sync.Mutex
	frames int
	last   *image.RGBA
	closed bool
}

func (s *fakeScreen) Size() image.Point { return image.Pt(800, 480) }

func (s *fakeScreen) Show(f *image.RGBA) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("closed")
	}
	s.frames++
	s.last = image.NewRGBA(f.Rect)
	copy(s.last.Pix, f.Pix)
	return nil
}

func (s *fakeScreen) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func (s *fakeScreen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames
}

// TestDrawsOnlyOnChange: the screen gets a frame when what it shows
// changes, not when the player reports a change nobody can see. It runs in a
// synctest bubble to know when Run has handled a change that draws nothing.
func TestDrawsOnlyOnChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newFakePlayer(playingStatus())
		scr := &fakeScreen{}
		d, _ := newTestDisplay(t, p, func(o *Options) { o.Screen = scr })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // a failed check leaves no goroutine behind in the bubble
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()

		waitFor(t, func() bool { return scr.count() == 1 })
		// Sub-second progress (83.4 s → 83.7 s) is invisible: no new frame.
		p.set(func(st *player.Status) { st.Position += 0.3 })
		d.SetBatteryLow(false)
		synctest.Wait() // Run has taken both in and waits again
		if n := scr.count(); n != 1 {
			t.Fatalf("%d frames after invisible changes, want 1", n)
		}
		p.set(func(st *player.Status) { st.Volume = 40 })
		waitFor(t, func() bool { return scr.count() == 2 })
		d.SetBatteryLow(true)
		waitFor(t, func() bool { return scr.count() == 3 })

		// What the screen got is what the screenshot shows.
		shot := snap(t, d)
		scr.mu.Lock()
		n := diffPixels(shot, scr.last, shot.Bounds())
		scr.mu.Unlock()
		if n != 0 {
			t.Errorf("screenshot differs from the screen in %d pixels", n)
		}

		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if !scr.closed {
			t.Error("Run did not close the screen")
		}
	})
}

// TestMessageExpiresOnScreen: Run takes the overlay down by itself when
// duration_ms is over. In a synctest bubble the 200 ms are fake time, so a
// slow test cannot miss the frame with the message.
func TestMessageExpiresOnScreen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		scr := &fakeScreen{}
		d, err := New(Options{Player: newFakePlayer(idleStatus()), Screen: scr})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go d.Run(ctx)
		waitFor(t, func() bool { return scr.count() == 1 })
		showMessage(t, d, "", "Kurz", 200)
		waitFor(t, func() bool { return scr.count() == 2 })
		waitFor(t, func() bool { return scr.count() == 3 })
		if d.ActiveMessage() != nil {
			t.Error("message still active")
		}
	})
}

func TestNewRejects(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("no player accepted")
	}
	if _, err := New(Options{Player: newFakePlayer(idleStatus()), Size: image.Pt(100, 50)}); err == nil {
		t.Error("tiny screen accepted")
	}
}

func TestHomeErrorKeepsTiles(t *testing.T) {
	calls := 0
	var errs []error
	var mu sync.Mutex
	d, clk := newTestDisplay(t, newFakePlayer(idleStatus()), func(o *Options) {
		h := testHome()
		o.Home = HomeFunc(func(context.Context) (home.Home, error) {
			calls++
			if calls > 1 {
				return home.Home{}, errors.New("database locked")
			}
			return h, nil
		})
		o.OnError = func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
	})
	first := snap(t, d)
	clk.add(time.Minute)
	if n := diffPixels(snap(t, d), first, first.Bounds()); n != 0 {
		t.Errorf("a failed home read changed %d pixels", n)
	}
	if calls != 2 || len(errs) != 1 {
		t.Errorf("calls = %d, errors = %v", calls, errs)
	}
}

// The playing screen shows no tiles: the home model, a copy of the whole
// library, is not read again while it shows, and is read when the home
// screen comes back.
func TestHomeNotReadWhilePlaying(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	p := newFakePlayer(idleStatus())
	d, clk := newTestDisplay(t, p, func(o *Options) {
		h := testHome()
		o.Home = HomeFunc(func(context.Context) (home.Home, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			return h, nil
		})
	})
	read := func() int { mu.Lock(); defer mu.Unlock(); return calls }
	snap(t, d)
	p.set(func(s *player.Status) { *s = playingStatus() })
	snap(t, d)
	if d.shown.Screen != screenPlaying {
		t.Fatalf("screen %v, want playing", d.shown.Screen)
	}
	before := read()
	for range 5 {
		clk.add(time.Minute)
		snap(t, d)
	}
	if n := read() - before; n != 0 {
		t.Errorf("the home model was read %d times while the playing screen showed", n)
	}
	p.set(func(s *player.Status) { *s = idleStatus() })
	snap(t, d)
	if d.shown.Screen != screenHome || read() == before {
		t.Errorf("back on the home screen (%v) the model was not read again", d.shown.Screen)
	}
}
