package main

import (
	"bufio"
	"bytes"
	"context"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/storybox/storybox/services/playerd/internal/mpris/dbustest"
)

// The box on a desktop: run() with -mpris session on a private session
// bus, driven by Debian's playerctl as a user's media keys would, and
// checked through the HTTP API.
func TestMPRISWithPlayerctl(t *testing.T) {
	playerctl := dbustest.Need(t, "playerctl")[0]
	addr := dbustest.Start(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	owned := watchName(t, addr, "org.mpris.MediaPlayer2.storybox")

	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {30, 30, 30}})
	var cover bytes.Buffer
	if err := png.Encode(&cover, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(media, "Hoerspiele", "Folge A", "cover.png"), cover.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) { c.MPRIS = "session" })
	defer stop()
	select {
	case <-owned:
	case <-time.After(20 * time.Second):
		t.Fatal("the box did not appear on the session bus")
	}

	pc := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(playerctl, append([]string{"--player=storybox"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("playerctl %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	status := func() map[string]any { return getJSON[map[string]any](t, base+"/api/status") }

	if got := pc("status"); got != "Stopped" {
		t.Errorf("status with nothing loaded: %q", got)
	}
	// Nothing to play: CanPlay and CanPause are false, so playerctl does
	// not even ask.
	if out, err := exec.Command(playerctl, "--player=storybox", "play-pause").CombinedOutput(); err == nil {
		t.Errorf("play-pause with nothing loaded succeeded: %s", out)
	}
	if st := status(); st["state"] != "stopped" {
		t.Errorf("play-pause with nothing loaded: %v", st["state"])
	}

	id := getJSON[[]map[string]any](t, base+"/api/library")[0]["id"].(string)
	follow := followPlayerctl(t, playerctl, "{{status}}|{{title}}|{{volume}}")
	client(t, base).ok("POST", "/api/command", `{"action":"folder","folder_id":"`+id+`"}`)
	follow.expect(t, "Playing|Folge 1", 0.3)
	if got := pc("metadata", "--format", "{{album}}|{{mpris:artUrl}}|{{mpris:length}}"); got != "Folge A|"+base+"/api/cover/"+id+"|30000000" {
		t.Errorf("metadata %q", got)
	}

	pc("play-pause")
	if st := status(); st["state"] != "paused" {
		t.Errorf("after play-pause: %v", st["state"])
	}
	follow.expect(t, "Paused|Folge 1", 0.3)

	pc("next")
	if st := status(); st["index"] != 1.0 || st["state"] != "paused" {
		t.Errorf("after next: index %v, state %v", st["index"], st["state"])
	}
	follow.expect(t, "Paused|Folge 2", 0.3)

	pc("volume", "0.5")
	if st := status(); st["volume"] != 50.0 {
		t.Errorf("after volume 0.5: %v", st["volume"])
	}
	follow.expect(t, "Paused|Folge 2", 0.5)
	pc("volume", "1")
	if st := status(); st["volume"] != st["max_volume"] {
		t.Errorf("volume 1 gives %v, want the cap %v", st["volume"], st["max_volume"])
	}
	if got := pc("volume"); got != "0.800000" {
		t.Errorf("volume at the cap reads %q", got)
	}
	follow.expect(t, "Paused|Folge 2", 0.8)

	pc("position", "12")
	if st := status(); st["position"] != 12.0 {
		t.Errorf("after position 12: %v", st["position"])
	}
	pc("position", "3+")
	if got, _ := strconv.ParseFloat(pc("position"), 64); got != 15 {
		t.Errorf("after position 3+: playerctl reads %v", got)
	}
	if st := status(); st["position"] != 15.0 {
		t.Errorf("after position 3+: %v", st["position"])
	}

	// The other way round: a change through the HTTP API reaches the
	// desktop as PropertiesChanged.
	client(t, base).ok("POST", "/api/command", `{"action":"next"}`)
	follow.expect(t, "Paused|Folge 3", 0.8)
	client(t, base).ok("POST", "/api/command", `{"action":"toggle"}`)
	follow.expect(t, "Playing|Folge 3", 0.8)
	pc("stop")
	if st := status(); st["state"] != "stopped" {
		t.Errorf("after stop: %v", st["state"])
	}

	// The play switches, both ways.
	if got := pc("shuffle"); got != "Off" {
		t.Errorf("shuffle reads %q", got)
	}
	if got := pc("loop"); got != "None" {
		t.Errorf("loop reads %q", got)
	}
	pc("shuffle", "On")
	if st := status(); st["shuffle"] != true {
		t.Errorf("after shuffle On: %v", st["shuffle"])
	}
	for _, lr := range [][2]string{{"Track", "track"}, {"Playlist", "folder"}, {"None", "off"}} {
		loop, repeat := lr[0], lr[1]
		pc("loop", loop)
		if st := status(); st["repeat"] != repeat {
			t.Errorf("after loop %s: repeat %v", loop, st["repeat"])
		}
		if got := pc("loop"); got != loop {
			t.Errorf("after loop %s: playerctl reads %q", loop, got)
		}
	}
	mode := followPlayerctl(t, playerctl, "{{shuffle}}|{{loop}}")
	mode.expectLine(t, "true|None")
	client(t, base).ok("POST", "/api/command", `{"action":"repeat","value":"track"}`)
	mode.expectLine(t, "true|Track")
	client(t, base).ok("POST", "/api/command", `{"action":"shuffle","value":false}`)
	mode.expectLine(t, "false|Track")
}

// A desktop's session bus that goes away and comes back (a new login)
// finds the box on it again: MPRIS is restarted like every surface.
func TestMPRISRestartsWhenTheBusComesBack(t *testing.T) {
	first, stopFirst := dbustest.StartStoppable(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", first)
	owned := watchName(t, first, "org.mpris.MediaPlayer2.storybox")
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {30}})
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) { c.MPRIS = "session" })
	defer stop()
	select {
	case <-owned:
	case <-time.After(20 * time.Second):
		t.Fatal("the box did not appear on the session bus")
	}
	stopFirst()
	// MPRIS reads the address each time it starts; the watch is there
	// before the box can find the bus.
	second := dbustest.Start(t)
	back := watchName(t, second, "org.mpris.MediaPlayer2.storybox")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", second)
	select {
	case <-back:
	case <-time.After(30 * time.Second): // pauses of 1, 2, 4 s between tries
		t.Fatal("the box did not come back on the new session bus")
	}
	if st := getJSON[map[string]any](t, base+"/api/status"); st["state"] != "stopped" {
		t.Errorf("the box after the bus came back: %v", st["state"])
	}
}

// watchName reports when name gets an owner on the bus at addr.
func watchName(t *testing.T, addr, name string) <-chan struct{} {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, name)); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan *dbus.Signal, 10)
	conn.Signal(sigs)
	owned := make(chan struct{})
	go func() {
		for s := range sigs {
			if len(s.Body) == 3 && s.Body[2] != "" {
				close(owned)
				return
			}
		}
	}()
	return owned
}

// follower is `playerctl --follow metadata --format …`: a line each time
// what the format shows changes.
type follower struct{ lines chan string }

func followPlayerctl(t *testing.T, playerctl, format string) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, playerctl, "--player=storybox", "--follow", "metadata", "--format", format)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &follower{lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		close(f.lines)
	}()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return f
}

// expect reads lines until one shows want ("status|title") and volume
// (lines in between are states passed on the way, which --follow may
// show). playerctl prints the volume as the double it got.
func (f *follower) expect(t *testing.T, want string, volume float64) {
	t.Helper()
	var seen []string
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-f.lines:
			if !ok {
				t.Fatalf("playerctl --follow ended; saw %q, want %q volume %v", seen, want, volume)
			}
			i := strings.LastIndexByte(line, '|')
			v, err := strconv.ParseFloat(line[i+1:], 64)
			if i > 0 && line[:i] == want && err == nil && math.Abs(v-volume) < 1e-9 {
				return
			}
			seen = append(seen, line)
		case <-timeout:
			t.Fatalf("playerctl --follow: saw %q, want %q volume %v", seen, want, volume)
		}
	}
}

// expectLine waits for the line want, the follower's lines in between
// aside.
func (f *follower) expectLine(t *testing.T, want string) {
	t.Helper()
	var seen []string
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-f.lines:
			if !ok {
				t.Fatalf("playerctl --follow ended; saw %q, want %q", seen, want)
			}
			if line == want {
				return
			}
			seen = append(seen, line)
		case <-timeout:
			t.Fatalf("playerctl --follow: saw %q, want %q", seen, want)
		}
	}
}
