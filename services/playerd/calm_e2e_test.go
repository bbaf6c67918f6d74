package main

import (
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
)

// Issue 36: calm mode through the reader. A calm card switches the
// parent's setting; a folder card over a playing track waits (status and
// read say so) and starts when the track ends, never cutting it off; a
// command card acts at once and stop drops what waits.
func TestCalmModeQueuesACardUntilTheTrackEnds(t *testing.T) {
	media, data := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {1.5, 30}, "Hoerspiele/Folge B": {30}}), t.TempDir()
	b := startCardBox(t, media, data, nil)
	folderA, folderB := folderIDs(t, b.base)
	b.devs.Plug(readerPath, inputtest.Reader)
	b.waitDevices(1)
	b.do("PUT", "/api/admin/cards", `{"sounds":false}`).want(t, "quiet", 200, "")
	b.do("PUT", "/api/admin/cards/1", `{"action":"calm","value":true,"name":"Kindergarten"}`).want(t, "calm card", 200, "")
	b.do("PUT", "/api/admin/cards/1", `{"action":"calm","value":"on"}`).want(t, "calm word", 400, "calm takes no word as value")
	b.do("PUT", "/api/admin/cards/2", `{"action":"folder","folder_id":"`+folderB+`"}`).want(t, "card B", 200, "")
	b.do("PUT", "/api/admin/cards/3", `{"action":"stop"}`).want(t, "stop card", 200, "")
	b.do("PUT", "/api/admin/cards/4", `{"action":"volume_delta","value":5}`).want(t, "louder card", 200, "")

	if r := b.place("1"); r["outcome"] != cards.OutDone {
		t.Fatalf("calm card: %v", r)
	}
	s := b.do("GET", "/api/admin/settings", "").want(t, "settings", 200, "")
	if s.body["calm"] != true {
		t.Fatalf("the calm card did not switch the setting: %s", s.raw)
	}

	post(t, b.base, `{"action":"folder","folder_id":"`+folderA+`"}`)
	// A command card acts at once; a folder card waits.
	if r := b.place("4"); r["outcome"] != cards.OutDone || b.status()["volume"] != 35.0 {
		t.Errorf("volume card in calm mode: %v, volume %v", r, b.status()["volume"])
	}
	if r := b.place("2"); r["outcome"] != cards.OutWaiting {
		t.Fatalf("card B: %v", r)
	}
	st := b.status()
	w, _ := st["waiting"].(map[string]any)
	if st["folder_id"] != folderA || w == nil || w["folder_id"] != folderB || w["folder"] != "Folge B" {
		t.Fatalf("status while B waits: folder %v waiting %v", st["folder_id"], st["waiting"])
	}
	// The first track of A plays to its end, then B starts: A's second
	// track is never current.
	waitUntil(t, "B after A's first track", 10*time.Second, func() bool {
		st := b.status()
		if st["folder_id"] == folderA && st["index"] != 0.0 {
			t.Fatalf("A went on to track %v", st["index"])
		}
		return st["folder_id"] == folderB && st["state"] == "playing"
	})
	if st := b.status(); st["waiting"] != nil {
		t.Errorf("still waiting after B started: %v", st["waiting"])
	}

	// Over B, A's card waits; a stop card drops it.
	b.do("PUT", "/api/admin/cards/5", `{"action":"folder","folder_id":"`+folderA+`"}`).want(t, "card A", 200, "")
	if r := b.place("5"); r["outcome"] != cards.OutWaiting {
		t.Fatalf("card A: %v", r)
	}
	if r := b.place("3"); r["outcome"] != cards.OutDone {
		t.Fatalf("stop card: %v", r)
	}
	if st := b.status(); st["state"] != "stopped" || st["waiting"] != nil {
		t.Errorf("after the stop card: state %v waiting %v", st["state"], st["waiting"])
	}
}
