package box

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/battery"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/radio"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/sysinfo"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// testBox is a core over a library with one folder "A" (a 30 s track) and
// the null output, on a clock the test moves, running until the test ends.
type testBox struct {
	*Box
	clock *clocktest.Clock
}

func newTestBox(t *testing.T, edit func(*Config)) *testBox {
	t.Helper()
	media := t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"A": {30}}); err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(time.Date(2026, 1, 5, 20, 0, 0, 0, time.UTC))
	cfg := Config{Media: media, Data: t.TempDir(), Output: "null", Version: "test", Clock: clk,
		SpeechProgram: filepath.Join(t.TempDir(), "none"), Fetch: fetch.Policy{AllowLoopback: true}}
	if edit != nil {
		edit(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		b.Close()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	// The first scan runs in Run; wait for it, as a surface's user would.
	for !b.lib.Scanned() {
		<-b.lib.Changed()
	}
	return &testBox{b, clk}
}

// station adds a station to the catalog and returns its folder id.
func (b *testBox) station(t *testing.T, name string) string {
	t.Helper()
	st, err := b.radio.AddStation(radio.Station{Name: name, URL: "http://127.0.0.1:9/" + name})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range b.radio.Folders() {
		if f.Name == name {
			return f.ID
		}
	}
	t.Fatalf("station %+v is no folder", st)
	return ""
}

func TestPowerTwiceIsAConflict(t *testing.T) {
	b := newTestBox(t, func(c *Config) { c.Reboot = func(context.Context) error { return nil } })
	if dry, err := b.System(sysinfo.Ready{}).Power(power.Reboot); err != nil || dry {
		t.Fatalf("first: %v %v", dry, err)
	}
	if act := <-b.power.Requested(); act != power.Reboot {
		t.Errorf("requested %q", act)
	}
}

// Every way to the power meets the same rule: the first request is taken,
// any other while it is pending is refused with the same error, whoever
// asks (the admin area, home automation, the button, the idle time, the
// battery).
func TestOnePendingPowerRequest(t *testing.T) {
	b := newTestBox(t, func(c *Config) {
		c.PowerOff = func(context.Context) error { return nil }
		c.Reboot = func(context.Context) error { return nil }
	})
	if _, err := b.power.Request(power.Reboot, "administrator"); err != nil {
		t.Fatal(err)
	}
	for _, by := range []string{"administrator", "home automation", "power button", "idle time", "battery critical"} {
		for _, act := range []power.Action{power.Reboot, power.PowerOff} {
			if _, err := b.power.Request(act, by); !errors.Is(err, ErrPowerPending) || fault.KindOf(err) != fault.Conflict {
				t.Errorf("%s asking %s while a reboot is pending: %v", by, act, err)
			}
		}
	}
	if act := <-b.power.Requested(); act != power.Reboot {
		t.Errorf("requested %q, want the first request", act)
	}
}

// A machine that cannot switch takes every request as a dry run: the box
// keeps running, whoever asked.
func TestPowerOnADevelopmentMachine(t *testing.T) {
	if power.OnGokrazy() {
		t.Skip("this machine switches for real")
	}
	b := newTestBox(t, nil)
	if b.power.CanSwitch() {
		t.Fatal("a development machine says it can switch")
	}
	for range 2 {
		if dry, err := b.power.Request(power.PowerOff, "power button"); !dry || err != nil {
			t.Fatalf("dry run: %v %v", dry, err)
		}
	}
	select {
	case act := <-b.power.Requested():
		t.Fatalf("a dry run was handed on: %q", act)
	default:
	}
}

func TestCriticalBatterySwitchesOff(t *testing.T) {
	b := newTestBox(t, func(c *Config) { c.PowerOff = func(context.Context) error { return nil } })
	sub := b.feed.Subscribe()
	defer sub.Close()
	b.BatteryLevel(context.Background(), battery.Change{From: battery.Low, To: battery.Critical})
	if act := <-b.power.Requested(); act != power.PowerOff {
		t.Errorf("requested %q", act)
	}
	if ev := nextOf(t, sub, events.KindBattery); ev.Payload.(BatteryEvent).Level != battery.Critical {
		t.Errorf("battery event %+v", ev.Payload)
	}
}

// nextOf waits for the next event of kind k.
func nextOf(t *testing.T, sub *events.Subscription, k events.Kind) *events.Event {
	t.Helper()
	for {
		ready := sub.Ready()
		ev, err := sub.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev == nil {
			<-ready
			continue
		}
		if ev.Kind == k {
			return ev
		}
	}
}

// The catalog is one: a station is a folder for every consumer of a
// folder id in the core, and a parental rule may lock it.
func TestStationIsAFolderEverywhere(t *testing.T) {
	b := newTestBox(t, nil)
	id := b.station(t, "Kinderfunk")
	if _, ok := b.Catalog().Folder(id); !ok {
		t.Fatal("the catalog does not know the station")
	}
	r := rules.Rules{LockedFolders: []string{id}}
	if _, err := b.Parental().SetRules(r); err != nil {
		t.Fatalf("locking the station: %v", err)
	}
	for _, c := range b.Home().Categories {
		for _, r := range c.Rows {
			for _, it := range r.Items {
				if it.ID == id {
					t.Errorf("a locked station shows on the home screen in %q", r.ID)
				}
			}
		}
	}
	if _, err := b.Parental().SetRules(rules.Rules{LockedFolders: []string{library.ID("nowhere")}}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("locking a folder that does not exist: %v", err)
	}
}

// The library's changes outside a scan reach the feed, so the screen and
// every client hear of them without anyone calling them.
func TestCatalogChangesOnTheFeed(t *testing.T) {
	b := newTestBox(t, nil)
	sub := b.feed.Subscribe()
	defer sub.Close()
	if _, err := b.LibraryAdmin().CreateFolder("", "Neu"); err != nil {
		t.Fatal(err)
	}
	if ev := nextOf(t, sub, events.KindCatalog); ev.Payload.(events.CatalogChange).Source != events.CatalogLibrary {
		t.Errorf("payload %+v", ev.Payload)
	}
	b.station(t, "Kinderfunk")
	if ev := nextOf(t, sub, events.KindCatalog); ev.Payload.(events.CatalogChange).Source != events.CatalogRadio {
		t.Errorf("payload %+v", ev.Payload)
	}
}

func TestIdleShutdown(t *testing.T) {
	b := newTestBox(t, func(c *Config) { c.PowerOff = func(context.Context) error { return nil } })
	s := b.settings.Get()
	s.Power.IdleShutdownMinutes = 10
	if err := b.settings.Put(s); err != nil {
		t.Fatal(err)
	}
	tick := make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var released atomic.Int32
	var retained atomic.Uint64
	mem := heapMemory{retained: retained.Load, release: func() { released.Add(1); retained.Store(0) }}
	go func() { defer close(done); b.idle(ctx, tick, mem) }()
	defer func() { cancel(); <-done }()
	step := func(d time.Duration) {
		b.clock.Advance(d)
		tick <- time.Time{}
		tick <- time.Time{} // the second send waits until the first was handled
	}
	requested := func() bool {
		select {
		case <-b.power.Requested():
			return true
		default:
			return false
		}
	}

	// Playing keeps the box on, however long, and its leftovers in memory
	// wait until it stops.
	if _, err := b.player.Do(ctx, player.Command{Action: player.ActFolder, FolderID: library.ID("A")}); err != nil {
		t.Fatal(err)
	}
	retained.Store(8 << 20)
	step(9 * time.Minute)
	step(9 * time.Minute)
	if requested() {
		t.Fatal("switched off while playing")
	}
	if n := released.Load(); n != 0 {
		t.Errorf("memory released %d times while playing", n)
	}
	// Paused: off after ten minutes, not before.
	if _, err := b.player.Do(ctx, player.Command{Action: player.ActPause}); err != nil {
		t.Fatal(err)
	}
	step(time.Minute) // ten minutes from the last tick that saw it playing
	step(8 * time.Minute)
	if requested() {
		t.Fatal("switched off before the idle time")
	}
	// The first idle tick after playing gave the memory back, once.
	if n := released.Load(); n != 1 {
		t.Errorf("memory released %d times after playing stopped, want 1", n)
	}
	// A step of the wall clock is no time passing: a day forward or back
	// neither switches off early nor restarts the count.
	b.clock.Step(24 * time.Hour)
	tick <- time.Time{}
	tick <- time.Time{}
	b.clock.Step(-48 * time.Hour)
	tick <- time.Time{}
	tick <- time.Time{}
	if requested() {
		t.Fatal("switched off by a step of the wall clock")
	}
	step(time.Minute)
	if !requested() {
		t.Fatal("not switched off after the idle time")
	}
	// 0 is never.
	s.Power.IdleShutdownMinutes = 0
	if err := b.settings.Put(s); err != nil {
		t.Fatal(err)
	}
	step(24 * time.Hour)
	if requested() {
		t.Error("switched off with idle shutdown 0")
	}

	// Idle with more heap to give back than releaseAbove whatever left it
	// (short plays no check saw, an upload, a scan): released at the next
	// check, once.
	retained.Store(releaseAbove + 1)
	step(time.Minute)
	step(time.Minute)
	if n := released.Load(); n != 2 {
		t.Errorf("memory released %d times with %d bytes to give back, want 2", n, releaseAbove+1)
	}
	retained.Store(releaseAbove)
	step(time.Minute)
	if n := released.Load(); n != 2 {
		t.Errorf("memory released %d times with only %d bytes to give back, want 2", n, releaseAbove)
	}
}

// The heap a release would give back is read from the runtime: garbage
// left by allocations shows, and a release takes it away.
func TestRetainedHeap(t *testing.T) {
	// No collection meanwhile: it would turn the garbage into free spans,
	// which the runtime's scavenger returns to the system at its own pace.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	debug.FreeOSMemory()
	before := retainedHeap()
	for range 64 {
		heapSink = make([]byte, 64<<10) // each replaces the last: 4 MB of garbage
	}
	heapSink = nil
	after := retainedHeap()
	if after < before+2<<20 {
		t.Errorf("4 MB of garbage: retained %d bytes, was %d", after, before)
	}
	debug.FreeOSMemory()
	if got := retainedHeap(); got+2<<20 > after {
		t.Errorf("after a release %d bytes retained, was %d", got, after)
	}
}

var heapSink []byte

// A start removes what writes interrupted by a power cut left in the data
// directory, at any depth, before anything writes, and nothing else.
func TestStartSweepsInterruptedWrites(t *testing.T) {
	data := t.TempDir()
	left := []string{".state.json.tmp-123", ".settings.json.tmp-9", "household/cards/.0004921380.json.tmp-7"}
	for _, n := range append(slices.Clone(left), "keep.json") {
		p := filepath.Join(data, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	newTestBox(t, func(c *Config) { c.Data = data })
	for _, n := range left {
		if _, err := os.Stat(filepath.Join(data, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s outlived the start: %v", n, err)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "keep.json")); err != nil {
		t.Errorf("keep.json: %v", err)
	}
}
