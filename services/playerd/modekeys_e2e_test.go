package main

import (
	"context"
	"testing"
	"time"

	evdev "github.com/holoplot/go-evdev"

	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
)

// Issue 36 through the in-memory evdev: previous held is the audiobook
// skip back (10 s), a short press still goes back a track (on release);
// the rewind key skips back at once; and the shuffle, repeat and seek_delta
// cards and a folder card's mode reach the player.
func TestModeKeysAndCards(t *testing.T) {
	media, data := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {60, 60}, "Hoerspiele/Folge B": {60, 60}}), t.TempDir()
	b := startCardBox(t, media, data, nil)
	folderA, folderB := folderIDs(t, b.base)
	kbd := "/dev/input/event1"
	b.devs.Plug(kbd, inputtest.Keyboard)
	b.devs.Plug(readerPath, inputtest.Reader)
	b.waitDevices(2)
	b.do("PUT", "/api/admin/input", `{"long_press_ms":500}`).want(t, "long press", 200, "")
	b.waitDevices(2)
	b.do("PUT", "/api/admin/cards", `{"sounds":false}`).want(t, "quiet", 200, "")
	post(t, b.base, `{"action":"folder","folder_id":"`+folderA+`"}`)
	position := func() float64 { return b.status()["position"].(float64) }
	ctx := context.Background()

	b.do("POST", "/api/command", `{"action":"seek","value":40}`).want(t, "seek", 200, "")
	b.devs.Key(ctx, kbd, evdev.KEY_PREVIOUSSONG, true)
	waitUntil(t, "10 s back while held", 10*time.Second, func() bool { p := position(); return p >= 29 && p < 35 })
	b.devs.Key(ctx, kbd, evdev.KEY_PREVIOUSSONG, false)
	b.devs.Key(ctx, kbd, evdev.KEY_REWIND, true)
	b.devs.Key(ctx, kbd, evdev.KEY_REWIND, false)
	waitUntil(t, "10 s back by rewind", 10*time.Second, func() bool { p := position(); return p >= 19 && p < 25 })
	if i := b.status()["index"]; i != 0.0 {
		t.Fatalf("the held key also went back a track: index %v", i)
	}
	b.do("POST", "/api/command", `{"action":"next"}`).want(t, "next", 200, "")
	b.devs.Key(ctx, kbd, evdev.KEY_PREVIOUSSONG, true)
	b.devs.Key(ctx, kbd, evdev.KEY_PREVIOUSSONG, false)
	waitUntil(t, "a short press goes back a track", 10*time.Second, func() bool { return b.status()["index"] == 0.0 })

	b.do("PUT", "/api/admin/cards/21", `{"action":"shuffle","value":true}`).want(t, "shuffle card", 200, "")
	b.do("PUT", "/api/admin/cards/22", `{"action":"repeat","value":"track"}`).want(t, "repeat card", 200, "")
	b.do("PUT", "/api/admin/cards/23", `{"action":"seek_delta","value":-10}`).want(t, "seek card", 200, "")
	b.do("PUT", "/api/admin/cards/24", `{"action":"seek_delta","value":0}`).want(t, "seek 0", 400, "seek_delta value is seconds, -600..600, not 0")
	b.do("PUT", "/api/admin/cards/25", `{"action":"folder","folder_id":"`+folderA+`","mode":"party"}`).want(t, "bad mode", 400, "")
	for _, id := range []string{"21", "22"} {
		if r := b.place(id); r["outcome"] != cards.OutDone {
			t.Fatalf("card %s: %v", id, r)
		}
	}
	if st := b.status(); st["shuffle"] != true || st["repeat"] != "track" {
		t.Errorf("after the cards: shuffle %v repeat %v", st["shuffle"], st["repeat"])
	}
	b.do("POST", "/api/command", `{"action":"seek","value":30}`).want(t, "seek", 200, "")
	if r := b.place("23"); r["outcome"] != cards.OutDone {
		t.Fatalf("seek card: %v", r)
	}
	if p := position(); p < 19 || p >= 25 {
		t.Errorf("after the seek card: position %v, want about 20", p)
	}
	// A folder card's own mode is the start's.
	b.do("PUT", "/api/admin/cards/26", `{"action":"folder","folder_id":"`+folderB+`","mode":"single"}`).want(t, "card with a mode", 200, "")
	if r := b.place("26"); r["outcome"] != cards.OutStarted {
		t.Fatalf("card with a mode: %v", r)
	}
	if st := b.status(); st["folder_id"] != folderB || st["mode"] != "single" {
		t.Errorf("after the card with a mode: folder %v mode %v", st["folder_id"], st["mode"])
	}
	// In single mode the second tap "next" is the next story.
	b.do("PUT", "/api/admin/cards/27", `{"action":"folder","folder_id":"`+folderB+`","same_card":"next"}`).want(t, "next card", 200, "")
	if r := b.place("27"); r["outcome"] != cards.OutSkipped {
		t.Fatalf("second tap in single mode: %v", r)
	}
	if st := b.status(); st["index"] != 1.0 || st["mode"] != "single" || st["state"] != "playing" {
		t.Errorf("after the second tap: index %v mode %v state %v, want the next story playing", st["index"], st["mode"], st["state"])
	}
}
