package box

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/battery"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/settings"
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

// notifiers is the one place the core's state is wired to the change feed,
// and the only caller of its Publish.
//
// Every owner of state that a parent, a child or the box itself changes is
// handed its notifier when New builds it, and calls it
// from inside its own mutation methods once the change is in force and, for
// a parent's configuration, on disk: the settings, the navigation, the
// library's folders, uploads and covers, the stations and podcasts, the
// parental rules and their restrictions, the card mappings, the input
// wiring, the message on screen, the home-automation pairing (the core's,
// openHomeAutomation) and the battery level. What changes on its own is
// read by the feed's goroutines (startFeed): the player's snapshots and the
// library's scans. A surface or an admin route never publishes: it calls the
// owner's method, and the owner tells everyone, so a new mutation of an
// owner is told as the others are, and a new owner cannot be built without
// being handed its notifier in New. TestEveryAdminChangeIsTold (package main) runs
// every mutating route of the API and fails when a screen or an event
// stream is not told.
type notifiers struct {
	bus *events.Bus
	log *slog.Logger
}

func (n notifiers) publish(k events.Kind, payload any) {
	if err := n.bus.Publish(k, payload); err != nil {
		n.log.Error("event not published", "kind", k, "error", err)
	}
}

// section tells that a part of the parent's configuration other than the
// settings document changed; clients re-read it.
func (n notifiers) section(name string) func() {
	return func() { n.publish(events.KindSettings, SettingsEvent{[]string{name}}) }
}

// catalog tells everyone who shows folders that the catalog changed outside
// a scan (a scan says so itself: events.KindLibrary).
func (n notifiers) catalog(source string) func() {
	return func() { n.publish(events.KindCatalog, events.CatalogChange{Source: source}) }
}

// settings tells which top-level sections differ between old and cur.
func (n notifiers) settings(old, cur settings.Settings) {
	sections, err := changedSections(old, cur)
	if err != nil {
		n.log.Error("settings event", "error", err)
		return
	}
	if len(sections) > 0 {
		n.publish(events.KindSettings, SettingsEvent{sections})
	}
}

func (n notifiers) restrictions(r rules.Restrictions) { n.publish(events.KindRestrictions, r) }
func (n notifiers) message(e message.Event)           { n.publish(events.KindMessage, e) }
func (n notifiers) battery(c battery.Change) {
	n.publish(events.KindBattery, BatteryEvent{c.To, c.Percent})
}

// Sections of events.KindSettings beside the settings' own top-level keys.
const (
	SectionNavigation     = "navigation"
	SectionParental       = "parental"
	SectionCards          = "cards"
	SectionInput          = "input"
	SectionHomeAutomation = "home_automation"
	SectionFolderModes    = "folder_modes"
)

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
		b.notify.publish(events.KindScan, p)
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
		b.notify.publish(events.KindLibrary, LibraryEvent{r.Scanned, r.Folders, r.Tracks, r.Skipped, len(r.Problems)})
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
