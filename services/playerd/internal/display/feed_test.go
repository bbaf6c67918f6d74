package display

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/events"
)

// messageEvents reads the message events sub has, as clients see them.
func messageEvents(t *testing.T, sub *events.Subscription) []string {
	t.Helper()
	var out []string
	for {
		ev, err := sub.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev == nil {
			return out
		}
		if ev.Kind != events.KindMessage {
			continue
		}
		var m MessageEvent
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			t.Fatal(err)
		}
		if m.Message == nil {
			out = append(out, "cleared")
		} else {
			out = append(out, m.Message.Message)
		}
	}
}

// Every way a message appears or goes is an event: shown, replaced,
// cleared with duration 0, dismissed with a tap, expired.
func TestMessagesArePublished(t *testing.T) {
	p := newFakePlayer(playingStatus())
	d, clk := newTestDisplay(t, p, nil)
	sub := p.feed.Subscribe()
	defer sub.Close()

	showMessage(t, d, "", "Eins", 5000)
	showMessage(t, d, "", "Zwei", 5000)
	showMessage(t, d, "", "weg", 0)
	showMessage(t, d, "", "auch weg", 0) // nothing on screen: nothing to clear
	showMessage(t, d, "", "Drei", 5000)
	snap(t, d)
	play := layoutPlaying(content(d.o.Size, false)).play
	if err := d.Tap(context.Background(), play.Min.Add(play.Max).Div(2)); err != nil {
		t.Fatal(err)
	}
	showMessage(t, d, "", "Vier", 1000)
	clk.add(time.Second)
	snap(t, d) // the screen notices the expiry when it draws
	snap(t, d)
	got := messageEvents(t, sub)
	want := []string{"Eins", "Zwei", "cleared", "Drei", "cleared", "Vier", "cleared"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
}

// A screen that fell behind the feed subscribes again and redraws; after
// the feed closed it stops listening.
func TestDrainReplacesADroppedSubscription(t *testing.T) {
	bus := events.New(events.Config{Keep: 2})
	d, _ := newTestDisplay(t, newFakePlayer(idleStatus()), func(o *Options) { o.Events = bus })
	sub := bus.Subscribe()
	for range 3 {
		if err := bus.Publish(events.KindVolume, map[string]int{"volume": 1}); err != nil {
			t.Fatal(err)
		}
	}
	pending, next := d.drain(sub)
	if !pending || next == sub || next == nil || next.Err() != nil {
		t.Fatalf("after being dropped: pending %v, next %v", pending, next)
	}
	if pending, again := d.drain(next); pending || again != next {
		t.Errorf("nothing new: pending %v", pending)
	}
	bus.Close()
	if pending, last := d.drain(next); pending || last != nil {
		t.Errorf("after the feed closed: pending %v, sub %v", pending, last)
	}
}

// Run goes on without the feed once it closes (the box shutting down), and
// returns when told.
func TestRunOutlivesTheFeed(t *testing.T) {
	p := newFakePlayer(idleStatus())
	scr := &fakeScreen{}
	d, _ := newTestDisplay(t, p, func(o *Options) { o.Screen = scr })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitFor(t, func() bool { return scr.count() == 1 })
	p.feed.Close()
	d.SetBatteryLow(true)
	waitFor(t, func() bool { return scr.count() == 2 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
