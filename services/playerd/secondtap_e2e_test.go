package main

import (
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
)

// Issue 36: the second tap of the card whose folder plays, through the
// in-memory evdev and the real player: restart (the document's choice)
// and next (a card's own), and a paused folder's card continuing.
func TestSecondTapThroughTheReader(t *testing.T) {
	media, data := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {30, 30, 30}, "Hoerspiele/Folge B": {30, 30}}), t.TempDir()
	b := startCardBox(t, media, data, nil)
	folderA, folderB := folderIDs(t, b.base)
	b.devs.Plug(readerPath, inputtest.Reader)
	b.waitDevices(1)
	b.do("PUT", "/api/admin/cards", `{"same_card":"restart"}`).want(t, "restart", 200, "")
	b.do("PUT", "/api/admin/cards", `{"same_card":"again"}`).want(t, "bad", 400, `same_card must be one of continue, toggle_pause, restart, next, not "again"`)
	b.do("PUT", "/api/admin/cards/11", `{"action":"folder","folder_id":"`+folderA+`"}`).want(t, "card A", 200, "")
	b.do("PUT", "/api/admin/cards/12", `{"action":"folder","folder_id":"`+folderB+`","same_card":"next"}`).want(t, "card B", 200, "")
	b.do("PUT", "/api/admin/cards/13", `{"action":"stop","same_card":"next"}`).want(t, "stop with same_card", 400, "stop takes no same_card")

	index := func() float64 { return b.status()["index"].(float64) }
	if r := b.place("11"); r["outcome"] != cards.OutStarted {
		t.Fatalf("first tap: %v", r)
	}
	waitUntil(t, "playing after the sound", 10*time.Second, func() bool { return b.status()["state"] == "playing" })
	b.do("POST", "/api/command", `{"action":"next"}`).want(t, "next", 200, "")
	if index() != 1 {
		t.Fatalf("index %v after next", index())
	}
	if r := b.place("11"); r["outcome"] != cards.OutRestarted {
		t.Fatalf("second tap restart: %v", r)
	}
	// The read's sound holds the music for a moment.
	waitUntil(t, "playing after the sound", 10*time.Second, func() bool { return b.status()["state"] == "playing" })
	if index() != 0 {
		t.Errorf("after restart: index %v, want 0", index())
	}

	if r := b.place("12"); r["outcome"] != cards.OutStarted {
		t.Fatalf("card B: %v", r)
	}
	// A tap during the read's sound finds the music held (paused).
	waitUntil(t, "playing after the sound", 10*time.Second, func() bool { return b.status()["state"] == "playing" })
	if r := b.place("12"); r["outcome"] != cards.OutSkipped {
		t.Fatalf("second tap next: %v", r)
	}
	waitUntil(t, "playing after the sound", 10*time.Second, func() bool { return b.status()["state"] == "playing" })
	if index() != 1 {
		t.Errorf("after next: index %v, want 1", index())
	}
	b.do("POST", "/api/command", `{"action":"pause"}`).want(t, "pause", 200, "")
	if r := b.place("12"); r["outcome"] != cards.OutContinued {
		t.Errorf("paused: %v", r)
	}
	waitUntil(t, "playing again", 10*time.Second, func() bool { return b.status()["state"] == "playing" })
	if index() != 1 {
		t.Errorf("continue moved to %v", index())
	}
}
