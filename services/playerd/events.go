package main

import (
	"context"
	"sync"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/events/playerfeed"
	"github.com/storybox/storybox/services/playerd/internal/hat"
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

func (a *app) publish(k events.Kind, payload any) {
	if err := a.events.Publish(k, payload); err != nil {
		a.log.Error("event not published", "kind", k, "error", err)
	}
}
