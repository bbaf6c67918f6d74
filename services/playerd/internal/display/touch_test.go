package display

import (
	"context"
	"errors"
	"fmt"
	"image"
	"sync"
	"testing"
	"time"

	evdev "github.com/holoplot/go-evdev"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// fakeEvents replays evdev events, then blocks like a quiet device until
// Close.
type fakeEvents struct {
	mu     sync.Mutex
	evs    []evdev.InputEvent
	closed chan struct{}
	once   sync.Once
}

func newFakeEvents(evs []evdev.InputEvent) *fakeEvents {
	return &fakeEvents{evs: evs, closed: make(chan struct{})}
}

func (f *fakeEvents) ReadOne() (*evdev.InputEvent, error) {
	f.mu.Lock()
	if len(f.evs) > 0 {
		ev := f.evs[0]
		f.evs = f.evs[1:]
		f.mu.Unlock()
		return &ev, nil
	}
	f.mu.Unlock()
	<-f.closed
	return nil, errors.New("device closed")
}

func (f *fakeEvents) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func ev(t evdev.EvType, c evdev.EvCode, v int32) evdev.InputEvent {
	return evdev.InputEvent{Type: t, Code: c, Value: v}
}

var syn = ev(evdev.EV_SYN, evdev.SYN_REPORT, 0)

// panel is a 12-bit touch controller in front of the 800×480 screen.
var panelX, panelY = axis{0, 4095}, axis{0, 4095}

func rawOf(p image.Point, size image.Point) (int32, int32) {
	return int32((p.X*4096 + 2048) / size.X), int32((p.Y*4096 + 2048) / size.Y)
}

// ftTap is what an ft5x06-class controller sends for one finger: the
// multi-touch slot protocol plus the single-touch emulation, a small slide
// while pressed, then the lift.
func ftTap(p, size image.Point) []evdev.InputEvent {
	x, y := rawOf(p, size)
	return []evdev.InputEvent{
		ev(evdev.EV_ABS, evdev.ABS_MT_SLOT, 0),
		ev(evdev.EV_ABS, evdev.ABS_MT_TRACKING_ID, 7),
		ev(evdev.EV_ABS, evdev.ABS_MT_POSITION_X, x),
		ev(evdev.EV_ABS, evdev.ABS_MT_POSITION_Y, y),
		ev(evdev.EV_KEY, evdev.BTN_TOUCH, 1),
		ev(evdev.EV_ABS, evdev.ABS_X, x),
		ev(evdev.EV_ABS, evdev.ABS_Y, y),
		syn,
		ev(evdev.EV_ABS, evdev.ABS_MT_POSITION_X, x+40),
		ev(evdev.EV_ABS, evdev.ABS_X, x+40),
		syn,
		ev(evdev.EV_ABS, evdev.ABS_MT_TRACKING_ID, -1),
		ev(evdev.EV_KEY, evdev.BTN_TOUCH, 0),
		syn,
	}
}

func centre(r image.Rectangle) image.Point { return r.Min.Add(r.Max).Div(2) }

// TestTouchReachesPlayer: synthetic evdev events for a tap on "+" on the
// now-playing screen go through the touch reader, the hit test and
// Player.Do, so the player's volume rules apply (here: clamped at 50).
func TestTouchReachesPlayer(t *testing.T) {
	st := playingStatus()
	st.Volume = 48
	p := newFakePlayer(st)
	size := image.Pt(800, 480)
	up := layoutPlaying(content(size, false)).volUp
	evs := append(ftTap(centre(up), size), ftTap(centre(up), size)...)
	src := newTouch(newFakeEvents(evs), panelX, panelY, size)

	d, _ := newTestDisplay(t, p, func(o *Options) { o.Touch = src })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()

	want := []player.Command{{Action: player.ActVolumeDelta}, {Action: player.ActVolumeDelta}}
	waitFor(t, func() bool { return len(p.commands()) == len(want) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, c := range p.commands() {
		if c.Action != want[i].Action || c.Value == nil || *c.Value != 5 {
			t.Errorf("command %d = %+v, want volume_delta +5", i, c)
		}
	}
	if v := p.Status().Volume; v != 50 {
		t.Errorf("volume = %d, want 50 (max_volume)", v)
	}
}

// TestTouchTapOnTile: a tap on a home tile sends the tile's own command and
// switches to now playing.
func TestTouchTapOnTile(t *testing.T) {
	p := newFakePlayer(idleStatus())
	d, _ := newTestDisplay(t, p, nil)
	snap(t, d)
	size := d.o.Size
	cell := layoutHome(content(size, false)).cells[5] // "Sams"
	src := newTouch(newFakeEvents(ftTap(centre(cell), size)), panelX, panelY, size)
	pt, err := src.NextTap()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Tap(context.Background(), pt); err != nil {
		t.Fatal(err)
	}
	cmds := p.commands()
	if len(cmds) != 1 || cmds[0].Action != player.ActFolder || cmds[0].FolderID != "f05" {
		t.Fatalf("commands = %+v, want folder f05", cmds)
	}
	if got := d.shown.Screen; got != screenPlaying {
		t.Errorf("screen after the tap = %v, want now playing", got)
	}
}

// A tap the parental rules refuse is no error: the screen says why, in the
// child's words, and stays where it was. Every tap command comes from the
// touch caller, so the rules treat it as the child's.
func TestRefusedTapShowsWhy(t *testing.T) {
	p := newFakePlayer(idleStatus())
	d, _ := newTestDisplay(t, p, nil)
	snap(t, d)
	cell := layoutHome(content(d.o.Size, false)).cells[0]
	until := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		err         error
		title, text string
	}{
		{&rules.Refusal{Reason: rules.ReasonBedtime, Msg: "bedtime until 07:00", Until: until}, "Schlafenszeit", "Gute Nacht! Um 07:00 geht es weiter."},
		{&rules.Refusal{Reason: rules.ReasonDailyLimit, Msg: "daily limit reached", Until: until}, "Genug für heute", "Morgen geht es weiter."},
		{&rules.Refusal{Reason: rules.ReasonLocked, Msg: "folder is locked"}, "Nur mit Mama oder Papa", "Das startet ein Erwachsener."},
	} {
		p.mu.Lock()
		p.err = c.err
		p.mu.Unlock()
		if _, err := d.ShowMessage(MessageRequest{Message: str("x"), DurationMS: new(int64)}); err != nil { // clear
			t.Fatal(err)
		}
		snap(t, d)
		if err := d.Tap(context.Background(), centre(cell)); err != nil {
			t.Fatalf("%s: tap: %v", c.title, err)
		}
		m := d.ActiveMessage()
		if m == nil || m.Title != c.title || m.Message != c.text {
			t.Errorf("shown: %+v, want %q %q", m, c.title, c.text)
		}
		if got := d.shown.Screen; got != screenHome {
			t.Errorf("screen after a refused tap = %v", got)
		}
	}
	p.mu.Lock()
	p.err = fault.New(fault.Conflict, "queue is empty")
	vias := append([]auth.Via(nil), p.vias...)
	p.mu.Unlock()
	if err := d.Command(context.Background(), player.Command{Action: player.ActPlay}); !errors.Is(err, fault.Conflict) {
		t.Errorf("other errors are errors: %v", err)
	}
	for _, v := range vias {
		if v != auth.Touch {
			t.Errorf("a tap came as %q", v)
		}
	}
}

// sleepLeft is parental restrictions with a sleep timer of secs left.
func sleepLeft(secs int) func() rules.Restrictions {
	return func() rules.Restrictions {
		m := 60
		return rules.Restrictions{SleepTimer: &rules.SleepState{Until: "time", Minutes: &m, LeftSeconds: &secs}}
	}
}

// The sleep timer's button steps through 15, 30 and 60 minutes and off,
// from whatever is set now, as the child.
func TestSleepButtonSteps(t *testing.T) {
	p := newFakePlayer(playingStatus())
	d, _ := newTestDisplay(t, p, nil)
	b := layoutPlaying(content(d.o.Size, false)).sleep
	for _, c := range []struct {
		set  func() rules.Restrictions
		want string // the command's value
	}{
		{nil, "15"},
		{func() rules.Restrictions { return rules.Restrictions{} }, "15"},
		{sleepLeft(12 * 60), "30"},
		{sleepLeft(25 * 60), "60"},
		{sleepLeft(45 * 60), "0"},
		{func() rules.Restrictions {
			return rules.Restrictions{SleepTimer: &rules.SleepState{Until: player.UntilTrack}}
		}, "0"},
	} {
		d.o.Restrictions = c.set
		snap(t, d)
		if err := d.Tap(context.Background(), centre(b)); err != nil {
			t.Fatal(err)
		}
		cmds := p.commands()
		last := cmds[len(cmds)-1]
		if last.Action != player.ActSleepTimer || last.Value == nil || fmt.Sprint(*last.Value) != c.want {
			t.Errorf("tap: %+v, want sleep_timer %s", last, c.want)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, v := range p.vias {
		if v != auth.Touch {
			t.Errorf("a tap came as %q", v)
		}
	}
}

func TestTapDecoder(t *testing.T) {
	size := image.Pt(800, 480)
	x, y := rawOf(image.Pt(100, 200), size)
	cases := []struct {
		name string
		evs  []evdev.InputEvent
		want []image.Point
	}{
		{name: "ft5x06", evs: ftTap(image.Pt(100, 200), size), want: []image.Point{{100, 200}}},
		{name: "single touch only", evs: []evdev.InputEvent{
			ev(evdev.EV_ABS, evdev.ABS_X, x), ev(evdev.EV_ABS, evdev.ABS_Y, y), ev(evdev.EV_KEY, evdev.BTN_TOUCH, 1), syn,
			ev(evdev.EV_KEY, evdev.BTN_TOUCH, 0), syn,
		}, want: []image.Point{{100, 200}}},
		{name: "second finger ignored", evs: []evdev.InputEvent{
			ev(evdev.EV_ABS, evdev.ABS_MT_SLOT, 0), ev(evdev.EV_ABS, evdev.ABS_MT_TRACKING_ID, 1),
			ev(evdev.EV_ABS, evdev.ABS_MT_POSITION_X, x), ev(evdev.EV_ABS, evdev.ABS_MT_POSITION_Y, y), syn,
			ev(evdev.EV_ABS, evdev.ABS_MT_SLOT, 1), ev(evdev.EV_ABS, evdev.ABS_MT_TRACKING_ID, 2),
			ev(evdev.EV_ABS, evdev.ABS_MT_POSITION_X, 4000), syn,
			ev(evdev.EV_ABS, evdev.ABS_MT_TRACKING_ID, -1), syn,
			ev(evdev.EV_ABS, evdev.ABS_MT_SLOT, 0), ev(evdev.EV_ABS, evdev.ABS_MT_TRACKING_ID, -1), syn,
		}, want: []image.Point{{100, 200}}},
		{name: "dropped events give no tap", evs: []evdev.InputEvent{
			ev(evdev.EV_ABS, evdev.ABS_X, x), ev(evdev.EV_ABS, evdev.ABS_Y, y), ev(evdev.EV_KEY, evdev.BTN_TOUCH, 1), syn,
			ev(evdev.EV_SYN, evdev.SYN_DROPPED, 0), ev(evdev.EV_KEY, evdev.BTN_TOUCH, 0), syn,
			ev(evdev.EV_KEY, evdev.BTN_TOUCH, 0), syn,
		}},
		{name: "press without release", evs: []evdev.InputEvent{
			ev(evdev.EV_ABS, evdev.ABS_X, x), ev(evdev.EV_KEY, evdev.BTN_TOUCH, 1), syn,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []image.Point
			src := newTouch(newFakeEvents(tc.evs), panelX, panelY, size)
			for _, e := range tc.evs {
				if raw, ok := src.dec.feed(e); ok {
					got = append(got, src.toScreen(raw))
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("taps = %v, want %v", got, tc.want)
			}
			for i := range got {
				if d := got[i].Sub(tc.want[i]); d.X*d.X+d.Y*d.Y > 2 {
					t.Errorf("tap %d at %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestTouchOrientation(t *testing.T) {
	size := image.Pt(800, 480)
	tc := newTouch(nil, axis{0, 479}, axis{0, 799}, size)
	tc.dec.opts = TouchOptions{SwapXY: true, InvertY: true}
	// A panel mounted a quarter turn round: raw x runs along the screen's
	// height (downwards), raw y along its width.
	if got := tc.toScreen([2]int32{479, 0}); got != image.Pt(0, 0) {
		t.Errorf("got %v, want (0,0)", got)
	}
	if got := tc.toScreen([2]int32{0, 799}); got != image.Pt(799, 479) {
		t.Errorf("got %v, want (799,479)", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
