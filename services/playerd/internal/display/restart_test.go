package display

import (
	"context"
	"errors"
	"image"
	"sync"
	"testing"
	"testing/synctest"
)

// chanTouch is a touch panel fed by the test.
type chanTouch struct {
	taps   chan image.Point
	closed chan struct{}
	once   sync.Once
}

func newChanTouch() *chanTouch {
	return &chanTouch{taps: make(chan image.Point), closed: make(chan struct{})}
}

func (c *chanTouch) NextTap() (image.Point, error) {
	select {
	case p := <-c.taps:
		return p, nil
	case <-c.closed:
		return image.Point{}, errors.New("touch closed")
	}
}

func (c *chanTouch) Close() error { c.once.Do(func() { close(c.closed) }); return nil }

func (c *chanTouch) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// A restart of the screen: Run ends and closes the screen and the touch
// panel; Attach hands the display new ones; the next Run draws its first
// frame whole on the new screen, though nothing changed, and taps on the
// new panel act.
func TestAttachAfterRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newFakePlayer(idleStatus())
		scr1, touch1 := &fakeScreen{}, newChanTouch()
		d, _ := newTestDisplay(t, p, func(o *Options) { o.Screen, o.Touch = scr1, touch1 })
		run := func() (stop func()) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- d.Run(ctx) }()
			return func() {
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
		}
		stop := run()
		waitFor(t, func() bool { return scr1.count() == 1 })
		stop()
		if !scr1.closed || !touch1.isClosed() {
			t.Fatalf("Run left the screen (closed %v) or the touch panel (closed %v) open", scr1.closed, touch1.isClosed())
		}

		scr2, touch2 := &fakeScreen{}, newChanTouch()
		if err := d.Attach(scr2, touch2); err != nil {
			t.Fatal(err)
		}
		stop = run()
		defer stop()
		waitFor(t, func() bool { return scr2.count() == 1 })
		if n := diffPixels(scr1.last, scr2.last, scr1.last.Bounds()); n != 0 {
			t.Errorf("the new screen's first frame differs from the last one in %d pixels", n)
		}
		if _, err := d.ShowMessage(MessageRequest{Message: str("Hallo")}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return scr2.count() == 2 })
		touch2.taps <- image.Pt(400, 240) // any tap closes a message
		waitFor(t, func() bool { return d.ActiveMessage() == nil && scr2.count() == 3 })
		if scr1.count() != 1 {
			t.Errorf("the closed screen got %d frames", scr1.count())
		}
	})
}

// A screen of another size would not fit the frame: it is refused and
// closed with the touch panel.
func TestAttachRefusesAnotherSize(t *testing.T) {
	d, _ := newTestDisplay(t, newFakePlayer(idleStatus()), nil)
	small := &sizedScreen{fakeScreen: &fakeScreen{}, size: image.Pt(480, 320)}
	touch := newChanTouch()
	if err := d.Attach(small, touch); err == nil {
		t.Fatal("a 480×320 screen was attached to an 800×480 display")
	}
	if !small.closed || !touch.isClosed() {
		t.Error("the refused screen or touch panel was left open")
	}
}

type sizedScreen struct {
	*fakeScreen
	size image.Point
}

func (s *sizedScreen) Size() image.Point { return s.size }
