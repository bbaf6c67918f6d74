package main

import (
	"context"
	"testing"
	"time"

	evdev "github.com/holoplot/go-evdev"

	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Issue 36: min_volume against every source of a volume change that
// reaches the box from outside: the API (volume, volume_delta), a card's
// volume_delta, the screen's minus, a volume key, and a restart (startup
// volume and the saved one). MPRIS and home automation use the same
// command path with their own caller (player.TestVolumeNeverBelowMinimum).
func TestMinVolumeHoldsForEverySource(t *testing.T) {
	media, data := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {30, 30}}), t.TempDir()
	started := make(chan *running, 1)
	b := startCardBox(t, media, data, func(c *setup) { c.onStart = func(x *running) { started <- x } })
	box := <-started
	folderA, _ := folderIDs(t, b.base)
	post(t, b.base, `{"action":"folder","folder_id":"`+folderA+`"}`)

	b.do("PUT", "/api/admin/settings", `{"audio":{"min_volume":81}}`).want(t, "above max", 400, "audio.min_volume must be 0..max_volume (80), not 81")
	b.do("PUT", "/api/admin/settings", `{"audio":{"min_volume":40}}`).want(t, "above startup", 400, "audio.startup_volume must not be below audio.min_volume (40), not 30")
	if v := b.status()["volume"]; v != 30.0 {
		t.Fatalf("a refused minimum changed the volume: %v", v)
	}
	b.do("POST", "/api/command", `{"action":"volume","value":10}`).want(t, "quiet", 200, "")
	s := b.do("PUT", "/api/admin/settings", `{"audio":{"min_volume":20,"startup_volume":25}}`).want(t, "min", 200, "")
	if a := s.body["settings"].(map[string]any)["audio"].(map[string]any); a["min_volume"] != 20.0 {
		t.Fatalf("settings: %s", s.raw)
	}
	waitUntil(t, "the volume raised to the new minimum", 10*time.Second, func() bool { return b.status()["volume"] == 20.0 })

	for _, c := range []string{`{"action":"volume","value":0}`, `{"action":"volume_delta","value":-50}`} {
		if st := b.do("POST", "/api/command", c).want(t, c, 200, ""); st.body["volume"] != 20.0 {
			t.Errorf("%s: volume %v, want 20", c, st.body["volume"])
		}
	}
	// The screen's − button: the display's command path, as a tap.
	down := -50.0
	if err := box.display.Command(context.Background(), player.Command{Action: player.ActVolumeDelta, Value: &down}); err != nil || b.status()["volume"] != 20.0 {
		t.Errorf("the screen's minus: %v, volume %v", err, b.status()["volume"])
	}
	b.do("POST", "/api/command", `{"action":"volume","value":30}`).want(t, "up", 200, "")

	b.devs.Plug(readerPath, inputtest.Reader)
	b.devs.Plug("/dev/input/event1", inputtest.Keyboard)
	b.waitDevices(2)
	b.do("PUT", "/api/admin/cards/00000009", `{"action":"volume_delta","value":-50}`).want(t, "quieter card", 200, "")
	if r := b.place("00000009"); r["outcome"] != cards.OutDone {
		t.Fatalf("card: %v", r)
	}
	if v := b.status()["volume"]; v != 20.0 {
		t.Errorf("after the card: volume %v, want 20", v)
	}
	b.do("POST", "/api/command", `{"action":"volume","value":22}`).want(t, "up", 200, "")
	ctx := context.Background()
	for range 3 {
		b.devs.Key(ctx, "/dev/input/event1", evdev.KEY_VOLUMEDOWN, true)
		b.devs.Key(ctx, "/dev/input/event1", evdev.KEY_VOLUMEDOWN, false)
	}
	waitUntil(t, "the volume key heard", 10*time.Second, func() bool { return b.status()["volume"] == 20.0 })
	b.do("POST", "/api/command", `{"action":"pause"}`).want(t, "pause", 200, "")
	if v := b.status()["volume"]; v != 20.0 {
		t.Errorf("pause changed the volume: %v", v)
	}

	// A restart starts at the saved volume (20, under the startup 25),
	// never below the minimum.
	b.stop()
	b2 := startCardBox(t, media, data, nil)
	if v := b2.status()["volume"]; v != 20.0 {
		t.Errorf("after a restart: volume %v, want 20", v)
	}
}
