package box

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/battery"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/library"
)

// What the core publishes beside the player's own events. docs/api.md
// describes each payload.

// LibraryEvent is the payload of events.KindLibrary: the library after a
// scan, as /api/info's library has it (problems counted, not listed).
type LibraryEvent struct {
	Scanned  bool `json:"scanned"`
	Folders  int  `json:"folders"`
	Tracks   int  `json:"tracks"`
	Skipped  int  `json:"skipped"`
	Problems int  `json:"problems"`
}

// BatteryEvent is the payload of events.KindBattery: a new battery level.
type BatteryEvent struct {
	Level   battery.Level `json:"level"`
	Percent *int          `json:"percent"`
}

// SettingsEvent is the payload of events.KindSettings: which parts of the
// parent's configuration changed (top-level keys of settings.json, or
// "navigation"), never their values, which are the admin area's.
type SettingsEvent struct {
	Sections []string `json:"sections"`
}

// scanProgressEvery bounds the scan events: a first scan reads thousands of
// files a second, a client wants a bar that moves.
const scanProgressEvery = 250 * time.Millisecond

func (b *Box) publish(k events.Kind, payload any) {
	if err := b.feed.Publish(k, payload); err != nil {
		b.log.Error("event not published", "kind", k, "error", err)
	}
}

// catalogChanged tells everyone who shows folders that the catalog changed
// outside a scan (a scan says so itself: events.KindLibrary).
func (b *Box) catalogChanged(source string) {
	b.publish(events.KindCatalog, events.CatalogChange{Source: source})
}

// publishProgress publishes the scan's progress (library.Progress) when a
// scan starts and ends, and in between at most once per every.
func (b *Box) publishProgress(ctx context.Context, changed <-chan struct{}, every time.Duration) {
	var last library.Progress
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		changed = b.lib.Progressed()
		p := b.lib.Progress()
		if p == last {
			continue
		}
		last = p
		b.publish(events.KindScan, p)
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

func (b *Box) publishScans(ctx context.Context, changed <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		changed = b.lib.Changed()
		r := b.lib.Report()
		b.publish(events.KindLibrary, LibraryEvent{r.Scanned, r.Folders, r.Tracks, r.Skipped, len(r.Problems)})
	}
}

// publishSettings tells which top-level sections differ between old and
// cur (anything that encodes as a JSON object).
func (b *Box) publishSettings(old, cur any) {
	sections, err := changedSections(old, cur)
	if err != nil {
		b.log.Error("settings event", "error", err)
		return
	}
	if len(sections) > 0 {
		b.publish(events.KindSettings, SettingsEvent{sections})
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
