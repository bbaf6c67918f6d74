package mpris

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/mpris/dbustest"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// fakePlayer records commands; the test sets the status and what Do
// answers.
type fakePlayer struct {
	mu   sync.Mutex
	st   player.Status
	cmds []player.Command
	err  error
}

func (p *fakePlayer) Status() player.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

func (p *fakePlayer) Do(_ context.Context, c player.Command) (player.Status, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cmds = append(p.cmds, c)
	return p.st, p.err
}

func (p *fakePlayer) set(f func(*player.Status)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.st)
}

func (p *fakePlayer) took() []player.Command {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.cmds
	p.cmds = nil
	return out
}

func sp(s string) *string { return &s }

func paused() player.Status {
	return player.Status{
		State: player.Paused, FolderID: sp("f1"), Folder: sp("Räuber Hotzenplotz"), Cover: sp("/api/cover/f1"),
		Queue: []player.QueueItem{
			{ID: "0123abcd", Title: "Kapitel 1", Artist: "Otfried Preußler", Duration: 60},
			{ID: "4567ef01", Title: "Kapitel 2", Duration: 90},
		},
		Index: 0, Position: 10, Duration: 60, Volume: 30, MaxVolume: 80, CanNext: true,
	}
}

type fixture struct {
	p      *fakePlayer
	bus    *events.Bus
	client *dbus.Conn
	obj    dbus.BusObject
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T) *fixture {
	t.Helper()
	addr := dbustest.Start(t)
	f := &fixture{p: &fakePlayer{st: paused()}, bus: events.New(events.Config{}), done: make(chan error, 1)}
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() {
		f.done <- Run(ctx, Config{Player: f.p, Events: f.bus, Address: addr, CoverBase: "http://box:8090",
			OnReady: func(name string) { ready <- name }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-f.done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	var name string
	select {
	case name = <-ready:
	case err := <-f.done:
		t.Fatalf("Run: %v", err)
	}
	if name != "org.mpris.MediaPlayer2.storybox" {
		t.Errorf("bus name %q", name)
	}
	client, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	f.client, f.obj = client, client.Object(name, objectPath)
	return f
}

func (f *fixture) get(t *testing.T, name string) any {
	t.Helper()
	v, err := f.obj.GetProperty(playerIface + "." + name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v.Value()
}

func (f *fixture) call(t *testing.T, method string, args ...any) error {
	t.Helper()
	return f.obj.Call(playerIface+"."+method, 0, args...).Err
}

func TestProperties(t *testing.T) {
	f := start(t)
	if got := f.get(t, "PlaybackStatus"); got != "Paused" {
		t.Errorf("PlaybackStatus %v", got)
	}
	if got := f.get(t, "Volume"); got != 0.3 {
		t.Errorf("Volume %v", got)
	}
	if got := f.get(t, "Position"); got != int64(10_000_000) {
		t.Errorf("Position %v", got)
	}
	md := f.get(t, "Metadata").(map[string]dbus.Variant)
	want := map[string]any{
		"mpris:trackid":     dbus.ObjectPath("/org/storybox/track/t0123abcd"),
		"mpris:length":      int64(60_000_000),
		"xesam:title":       "Kapitel 1",
		"xesam:album":       "Räuber Hotzenplotz",
		"xesam:artist":      []string{"Otfried Preußler"},
		"xesam:trackNumber": int32(1),
		"mpris:artUrl":      "http://box:8090/api/cover/f1",
	}
	for k, w := range want {
		if v, ok := md[k]; !ok || !equal(v.Value(), w) {
			t.Errorf("Metadata %s = %v, want %v", k, md[k], w)
		}
	}
	for name, w := range map[string]bool{"CanGoNext": true, "CanGoPrevious": true, "CanPlay": true, "CanPause": true, "CanSeek": true, "CanControl": true} {
		if got := f.get(t, name); got != w {
			t.Errorf("%s = %v", name, got)
		}
	}
	idv, err := f.obj.GetProperty(rootIface + ".Identity")
	if err != nil || idv.Value() != "storybox" {
		t.Errorf("Identity %v %v", idv, err)
	}
	// Nothing loaded: no track, nothing to play.
	f.p.set(func(s *player.Status) {
		*s = player.Status{State: player.Stopped, Index: -1, Queue: []player.QueueItem{}}
	})
	md = f.get(t, "Metadata").(map[string]dbus.Variant)
	if len(md) != 1 || md["mpris:trackid"].Value() != noTrack || f.get(t, "CanPlay") != false || f.get(t, "CanGoNext") != false {
		t.Errorf("unloaded: %v", md)
	}
	var xml string
	if err := f.obj.Call("org.freedesktop.DBus.Introspectable.Introspect", 0).Store(&xml); err != nil || xml != introspection {
		t.Errorf("Introspect: %v", err)
	}
}

func equal(a, b any) bool {
	if as, ok := a.([]string); ok {
		bs, _ := b.([]string)
		if len(as) != len(bs) {
			return false
		}
		for i := range as {
			if as[i] != bs[i] {
				return false
			}
		}
		return true
	}
	return a == b
}

func TestMethodsAreCommands(t *testing.T) {
	f := start(t)
	for method, action := range map[string]string{
		"PlayPause": player.ActToggle, "Play": player.ActPlay, "Pause": player.ActPause,
		"Stop": player.ActStop, "Next": player.ActNext, "Previous": player.ActPrevious,
	} {
		if err := f.call(t, method); err != nil {
			t.Errorf("%s: %v", method, err)
		}
		if got := f.p.took(); len(got) != 1 || got[0].Action != action {
			t.Errorf("%s sent %+v, want %s", method, got, action)
		}
	}
	seek := func(method string, args ...any) []player.Command {
		t.Helper()
		if err := f.call(t, method, args...); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return f.p.took()
	}
	if got := seek("Seek", int64(2_500_000)); len(got) != 1 || got[0].Action != player.ActSeek || *got[0].Value != 12.5 {
		t.Errorf("Seek +2.5 s from 10 s: %+v", got)
	}
	if got := seek("Seek", int64(-60_000_000)); len(got) != 1 || *got[0].Value != 0 {
		t.Errorf("Seek before the start: %+v", got)
	}
	if got := seek("Seek", int64(55_000_000)); len(got) != 1 || got[0].Action != player.ActNext {
		t.Errorf("Seek past the end: %+v, want next", got)
	}
	track := dbus.ObjectPath("/org/storybox/track/t0123abcd")
	if got := seek("SetPosition", track, int64(42_000_000)); len(got) != 1 || *got[0].Value != 42 {
		t.Errorf("SetPosition 42 s: %+v", got)
	}
	if got := seek("SetPosition", dbus.ObjectPath("/org/storybox/track/told"), int64(42_000_000)); len(got) != 0 {
		t.Errorf("SetPosition on another track: %+v", got)
	}
	if got := seek("SetPosition", track, int64(61_000_000)); len(got) != 0 {
		t.Errorf("SetPosition past the end: %+v", got)
	}
	// Volume: the box's scale, capped by the player.
	if err := f.obj.SetProperty(playerIface+".Volume", dbus.MakeVariant(1.5)); err != nil {
		t.Fatal(err)
	}
	if got := f.p.took(); len(got) != 1 || got[0].Action != player.ActVolume || *got[0].Value != 100 {
		t.Errorf("Volume 1.5: %+v", got)
	}
	if err := f.obj.SetProperty(playerIface+".Volume", dbus.MakeVariant("loud")); err == nil {
		t.Error("a string volume was taken")
	}
	if err := f.obj.SetProperty(playerIface+".PlaybackStatus", dbus.MakeVariant("Playing")); err == nil {
		t.Error("a read-only property was set")
	}
	if err := f.call(t, "OpenUri", "file:///etc/passwd"); err == nil {
		t.Error("OpenUri did something")
	}
	if got := f.p.took(); len(got) != 0 {
		t.Errorf("refused calls sent %+v", got)
	}
}

// What the player refuses: not possible now has no effect (MPRIS); a
// rule's refusal reaches the caller with its reason.
func TestRefusals(t *testing.T) {
	f := start(t)
	f.p.mu.Lock()
	f.p.err = fault.New(fault.Conflict, "queue is empty")
	f.p.mu.Unlock()
	if err := f.call(t, "Play"); err != nil {
		t.Errorf("Play with nothing to play: %v", err)
	}
	f.p.mu.Lock()
	f.p.err = fault.New(fault.Forbidden, "bedtime until 07:00")
	f.p.mu.Unlock()
	err := f.call(t, "Play")
	var de dbus.Error
	if e, ok := err.(dbus.Error); ok {
		de = e
	}
	if de.Name != "org.freedesktop.DBus.Error.AccessDenied" || len(de.Body) == 0 || de.Body[0] != "bedtime until 07:00" {
		t.Errorf("refused by a rule: %v", err)
	}
}

// Changes on the feed become PropertiesChanged (never with the position);
// a jump becomes Seeked.
func TestSignalsFollowTheFeed(t *testing.T) {
	f := start(t)
	if err := f.client.AddMatchSignal(dbus.WithMatchObjectPath(objectPath)); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan *dbus.Signal, 100)
	f.client.Signal(sigs)
	next := func() *dbus.Signal {
		t.Helper()
		select {
		case s := <-sigs:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("no signal")
		}
		return nil
	}
	f.p.set(func(s *player.Status) { s.State = player.Playing; s.Position = 11 })
	if err := f.bus.Publish(events.KindState, map[string]string{"state": "playing"}); err != nil {
		t.Fatal(err)
	}
	s := next()
	changed := s.Body[1].(map[string]dbus.Variant)
	if s.Name != propsIface+".PropertiesChanged" || s.Body[0] != playerIface || len(changed) != 1 || changed["PlaybackStatus"].Value() != "Playing" {
		t.Errorf("after play: %s %v", s.Name, s.Body)
	}
	// Events that change nothing MPRIS shows are silent; the next signal
	// is the seek's.
	if err := f.bus.Publish(events.KindMessage, map[string]any{"message": nil}); err != nil {
		t.Fatal(err)
	}
	f.p.set(func(s *player.Status) { s.Position = 30 })
	if err := f.bus.Publish(events.KindSeek, map[string]float64{"position": 30}); err != nil {
		t.Fatal(err)
	}
	if s := next(); s.Name != playerIface+".Seeked" || s.Body[0] != int64(30_000_000) {
		t.Errorf("after seek: %s %v", s.Name, s.Body)
	}
	f.p.set(func(s *player.Status) { s.Index, s.Position, s.Duration, s.Volume, s.CanNext = 1, 0, 90, 40, false })
	if err := f.bus.Publish(events.KindTrack, map[string]int{"index": 1}); err != nil {
		t.Fatal(err)
	}
	s = next()
	changed = s.Body[1].(map[string]dbus.Variant)
	md, _ := changed["Metadata"].Value().(map[string]dbus.Variant)
	if md["xesam:title"].Value() != "Kapitel 2" || changed["Volume"].Value() != 0.4 || changed["CanGoNext"].Value() != false {
		t.Errorf("after next: %v", changed)
	}
	if _, ok := changed["Position"]; ok {
		t.Error("PropertiesChanged carries the position")
	}
}

func TestSecondInstanceGetsItsOwnName(t *testing.T) {
	addr := dbustest.Start(t)
	bus := events.New(events.Config{})
	names := make(chan string, 2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	for range 2 {
		go func() {
			done <- Run(ctx, Config{Player: &fakePlayer{st: paused()}, Events: bus, Address: addr,
				OnReady: func(n string) { names <- n }})
		}()
	}
	a, b := <-names, <-names
	cancel()
	for range 2 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if a == b || (a != "org.mpris.MediaPlayer2.storybox" && b != "org.mpris.MediaPlayer2.storybox") {
		t.Errorf("names %q and %q", a, b)
	}
}

func TestNoSessionBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	if _, err := SessionAddress(); err != nil && err != ErrNoSessionBus {
		t.Errorf("SessionAddress: %v", err)
	}
	err := Run(context.Background(), Config{Player: &fakePlayer{}, Events: events.New(events.Config{}),
		Address: "unix:path=" + t.TempDir() + "/none"})
	if err == nil {
		t.Error("Run without a bus succeeded")
	}
}

// A session bus that goes away (the desktop session ends) ends Run with an
// error; playerd logs it and plays on.
func TestBusGoesAway(t *testing.T) {
	addr, stop := dbustest.StartStoppable(t)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Config{Player: &fakePlayer{st: paused()}, Events: events.New(events.Config{}),
			Address: addr, OnReady: func(n string) { ready <- n }})
	}()
	<-ready
	stop()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "went away") {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not notice the bus going away")
	}
}
