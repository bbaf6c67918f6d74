package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/events/playerfeed"
	"github.com/storybox/storybox/services/playerd/internal/hat"
	"github.com/storybox/storybox/services/playerd/internal/hav1"
	"github.com/storybox/storybox/services/playerd/internal/library"
)

// startEvents feeds the event feed from the parts that change on their
// own: the player (through its snapshots) and library scans, whoever
// started them. The screen, the battery monitor and later the rules and
// settings publish themselves.
// Both take their starting point before anything runs, so no change is
// missed.
func (a *app) startEvents(ctx context.Context, wg *sync.WaitGroup) {
	feed := playerfeed.New(a.player, a.events, nil, func(err error) { a.log.Error("player events", "error", err) })
	wg.Go(func() { feed.Run(ctx) })
	scanned := a.lib.Changed()
	wg.Go(func() { a.publishScans(ctx, scanned) })
	progressed := a.lib.Progressed()
	wg.Go(func() { a.publishProgress(ctx, progressed, scanProgressEvery) })
}

// scanProgressEvery bounds the scan events: a first scan reads thousands of
// files a second, a client wants a bar that moves.
const scanProgressEvery = 250 * time.Millisecond

// publishProgress publishes the scan's progress (library.Progress) when a
// scan starts and ends, and in between at most once per every.
func (a *app) publishProgress(ctx context.Context, changed <-chan struct{}, every time.Duration) {
	var last library.Progress
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		changed = a.lib.Progressed()
		p := a.lib.Progress()
		if p == last {
			continue
		}
		last = p
		a.publish(events.KindScan, p)
		if !p.Scanning {
			continue // the next scan's start is told at once
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// libraryEvent is the payload of events.KindLibrary: the library after a
// scan, as /api/info's library has it (problems counted, not listed).
type libraryEvent struct {
	Scanned  bool `json:"scanned"`
	Folders  int  `json:"folders"`
	Tracks   int  `json:"tracks"`
	Skipped  int  `json:"skipped"`
	Problems int  `json:"problems"`
}

func (a *app) publishScans(ctx context.Context, changed <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		changed = a.lib.Changed()
		r := a.lib.Report()
		a.publish(events.KindLibrary, libraryEvent{r.Scanned, r.Folders, r.Tracks, r.Skipped, len(r.Problems)})
	}
}

// batteryEvent is the payload of events.KindBattery: a new battery level.
type batteryEvent struct {
	Level   hat.Level `json:"level"`
	Percent *int      `json:"percent"`
}

// settingsEvent is the payload of events.KindSettings: which parts of the
// parent's configuration changed (top-level keys of settings.json, or
// "navigation"), never their values, which are the admin area's.
type settingsEvent struct {
	Sections []string `json:"sections"`
}

// publishSettings tells which top-level sections differ between old and
// cur (anything that encodes as a JSON object).
func (a *app) publishSettings(old, cur any) {
	sections, err := changedSections(old, cur)
	if err != nil {
		a.log.Error("settings event", "error", err)
		return
	}
	if len(sections) > 0 {
		a.publish(events.KindSettings, settingsEvent{sections})
	}
}

func changedSections(old, cur any) ([]string, error) {
	var o, c map[string]json.RawMessage
	for _, x := range []struct {
		v   any
		out *map[string]json.RawMessage
	}{{old, &o}, {cur, &c}} {
		b, err := json.Marshal(x.v)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, x.out); err != nil {
			return nil, err
		}
	}
	var out []string
	for k, v := range c {
		if w, ok := o[k]; !ok || !bytes.Equal(v, w) {
			out = append(out, k)
		}
	}
	for k := range o {
		if _, ok := c[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (a *app) publish(k events.Kind, payload any) {
	if err := a.events.Publish(k, payload); err != nil {
		a.log.Error("event not published", "kind", k, "error", err)
	}
}

// haFeed is the home-automation event stream's view of the event feed
// (hav1.Feed): the playback as it is, then playback_changed whenever a
// player event changes what the contract's playback object shows. The
// sequence is the feed's event id. A subscriber that falls behind the feed
// or its own 16 messages is dropped (the channel closes), never waited for.
type haFeed struct{ a *app }

var playerKinds = map[events.Kind]bool{
	events.KindState: true, events.KindQueue: true, events.KindTrack: true,
	events.KindVolume: true, events.KindSeek: true, events.KindNowPlaying: true,
}

func (f haFeed) Subscribe(ctx context.Context) <-chan hav1.Event {
	out := make(chan hav1.Event, 16)
	sub := f.a.events.Subscribe()
	go func() {
		defer close(out)
		defer sub.Close()
		var last hav1.Playback
		send := func(seq uint64) bool {
			pb := hav1.PlaybackOf(f.a.player.Status())
			if seq != sub.From() && reflect.DeepEqual(pb, last) {
				return true
			}
			last = pb
			select {
			case out <- hav1.Event{Event: "playback_changed", Sequence: seq, Data: pb}:
				return true
			default:
				return false
			}
		}
		if !send(sub.From()) {
			return
		}
		for {
			ready := sub.Ready()
			ev, err := sub.Next()
			switch {
			case err != nil:
				return
			case ev != nil:
				if playerKinds[ev.Kind] && !send(ev.ID) {
					return
				}
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-ready:
			}
		}
	}()
	return out
}
