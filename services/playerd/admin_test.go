package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// testApp is an app with a settings store, a running player over a real
// library and a power request channel: what the admin parts need.
func testApp(t *testing.T, cfg Config) *app {
	t.Helper()
	media := t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"A": {30}}); err != nil {
		t.Fatal(err)
	}
	cfg.Data, cfg.Media = t.TempDir(), media
	a := &app{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	a.adm.powerReq = make(chan power.Action, 1)
	var err error
	if a.settings, err = settings.Open(cfg.Data); err != nil {
		t.Fatal(err)
	}
	a.lib = library.New(media, "")
	if _, err := a.lib.Scan(); err != nil {
		t.Fatal(err)
	}
	a.player = player.New(player.Config{Catalog: a.lib, MaxVolume: 80, StartVolume: 30})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.player.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return a
}

func TestPowerTwiceIsAConflict(t *testing.T) {
	a := testApp(t, Config{Reboot: func(context.Context) error { return nil }})
	s := systemAdmin{a}
	if dry, err := s.Power(power.Reboot); err != nil || dry {
		t.Fatalf("first: %v %v", dry, err)
	}
	if _, err := s.Power(power.Reboot); !errors.Is(err, fault.Conflict) {
		t.Errorf("second: %v", err)
	}
	if act := <-a.adm.powerReq; act != power.Reboot {
		t.Errorf("requested %q", act)
	}
}

func TestIdleShutdown(t *testing.T) {
	a := testApp(t, Config{PowerOff: func(context.Context) error { return nil }})
	s := a.settings.Get()
	s.Power.IdleShutdownMinutes = 10
	if err := a.settings.Put(s); err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2026, 1, 1, 20, 0, 0, 0, time.UTC)}
	tick := make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var released atomic.Int32
	var retained atomic.Uint64
	mem := heapMemory{retained: retained.Load, release: func() { released.Add(1); retained.Store(0) }}
	go func() { defer close(done); a.idleShutdown(ctx, tick, clk.now, mem) }()
	defer func() { cancel(); <-done }()
	step := func(d time.Duration) {
		clk.add(d)
		tick <- clk.now()
		tick <- clk.now() // the second send waits until the first was handled
	}
	requested := func() bool {
		select {
		case <-a.adm.powerReq:
			return true
		default:
			return false
		}
	}

	// Playing keeps the box on, however long, and its leftovers in memory
	// wait until it stops.
	if _, err := a.player.Do(ctx, player.Command{Action: player.ActFolder, FolderID: library.ID("A")}); err != nil {
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
	if _, err := a.player.Do(ctx, player.Command{Action: player.ActPause}); err != nil {
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
	step(time.Minute)
	if !requested() {
		t.Fatal("not switched off after the idle time")
	}
	// 0 is never.
	s.Power.IdleShutdownMinutes = 0
	if err := a.settings.Put(s); err != nil {
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
