package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	evdev "github.com/holoplot/go-evdev"

	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/wiring"
)

const readerPath = "/dev/input/event3"

// cardBox is a running box with an in-memory /dev/input and a clock for
// card reads that the test moves.
type cardBox struct {
	t     *testing.T
	base  string
	c     *caller
	devs  *inputtest.Devices
	clock *clocktest.Clock
	stop  func()
}

func startCardBox(t *testing.T, media, data string, edit func(*setup)) *cardBox {
	t.Helper()
	b := &cardBox{t: t, devs: inputtest.New(), clock: testClock(time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC))}
	b.base, b.stop = startBoxWith(t, media, data, func(c *setup) {
		c.inputDevices, c.inputRescan, c.clock = b.devs, 5*time.Millisecond, b.clock
		if edit != nil {
			edit(c)
		}
	})
	t.Cleanup(b.stop)
	b.c = &caller{t: t, base: b.base, hc: &http.Client{}}
	return b
}

func (b *cardBox) do(method, path, body string) reply {
	b.t.Helper()
	return b.c.do(method, path, body)
}

// place types a card on the reader (a new placement: the clock moves past
// the repeat window first) and returns the read as the box reports it.
func (b *cardBox) place(id string) map[string]any {
	b.t.Helper()
	b.clock.Advance(cards.Repeat)
	return b.typeCard(id)
}

// typeCard types id and Enter and waits until the box has read it.
func (b *cardBox) typeCard(id string) map[string]any {
	b.t.Helper()
	before := len(b.reads())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.devs.Type(ctx, readerPath, id, true); err != nil {
		b.t.Fatal(err)
	}
	var r map[string]any
	waitUntil(b.t, "the read of "+id, 10*time.Second, func() bool {
		reads := b.reads()
		if len(reads) > before || (len(reads) == 20 && reads[0]["id"] == id) {
			r = reads[0]
			return true
		}
		return false
	})
	return r
}

func (b *cardBox) reads() []map[string]any { return b.list("/api/admin/cards/reads") }

func (b *cardBox) list(path string) []map[string]any {
	return getJSON[[]map[string]any](b.t, b.base+path)
}

func (b *cardBox) status() map[string]any { return getJSON[map[string]any](b.t, b.base+"/api/status") }

func (b *cardBox) devices() []any {
	in := b.do("GET", "/api/admin/input", "").want(b.t, "input", 200, "")
	return in.body["status"].(map[string]any)["devices"].([]any)
}

func (b *cardBox) waitDevices(n int) {
	b.t.Helper()
	waitUntil(b.t, "devices", 10*time.Second, func() bool { return len(b.devices()) == n })
}

func folderIDs(t *testing.T, base string) (a, b string) {
	for _, f := range getJSON[[]map[string]any](t, base+"/api/library") {
		switch f["name"] {
		case "Folge A":
			a = f["id"].(string)
		case "Folge B":
			b = f["id"].(string)
		}
	}
	return a, b
}

// Done-when of issue 17 against the real run(): an unknown card is
// reported, taught, assigned; placing it starts the folder; again within
// 2 s does nothing, again later does not restart it; a stop card stops;
// a reader unplugged in the middle of a number and plugged in again reads
// the next card whole; mappings and unknown cards survive a restart.
func TestCardsEndToEnd(t *testing.T) {
	media, data := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {30, 30}, "Hoerspiele/Folge B": {30}}), t.TempDir()
	b := startCardBox(t, media, data, nil)
	folderA, folderB := folderIDs(t, b.base)

	b.devs.Plug("/dev/input/event1", inputtest.Keyboard)
	b.devs.Plug(readerPath, inputtest.Reader)
	b.waitDevices(2)
	ctx := context.Background()
	if grabbed, err := b.devs.Grabbed(ctx, readerPath); err != nil || !grabbed {
		t.Errorf("reader grabbed: %v %v", grabbed, err)
	}
	if grabbed, _ := b.devs.Grabbed(ctx, "/dev/input/event1"); grabbed {
		t.Error("the keyboard was grabbed")
	}

	// An unknown card is remembered for the parent.
	if r := b.place("0004921380"); r["outcome"] != cards.OutUnknown {
		t.Fatalf("unknown card: %v", r)
	}
	if u := b.list("/api/admin/cards/unknown"); len(u) != 1 || u[0]["id"] != "0004921380" || u[0]["count"] != 1.0 {
		t.Fatalf("unknown list: %v", u)
	}
	// Digits on the keyboard are no card.
	if err := b.devs.Type(ctx, "/dev/input/event1", "999", true); err != nil {
		t.Fatal(err)
	}

	// Teach mode reports the next card and does not play it.
	l := b.do("POST", "/api/admin/cards/learn", `{"timeout_seconds":60}`).want(t, "learn", 200, "")
	if l.body["state"] != cards.LearnWaiting {
		t.Fatalf("learn: %s", l.raw)
	}
	b.place("0004921380")
	l = b.do("GET", "/api/admin/cards/learn?wait=5", "").want(t, "learned", 200, "")
	card, _ := l.body["card"].(map[string]any)
	if l.body["state"] != cards.LearnSeen || card["id"] != "0004921380" || card["known"] != false {
		t.Fatalf("learned: %s", l.raw)
	}
	if st := b.status(); st["state"] == "playing" {
		t.Errorf("teach mode played: %v", st)
	}

	// Assign it, with every answer the API has for a bad request.
	b.do("PUT", "/api/admin/cards/0004921380", `{"action":"folder","folder_id":"`+folderA+`","name":"Bobo"}`).want(t, "assign", 200, "")
	b.do("PUT", "/api/admin/cards/abc", `{"action":"stop"}`).want(t, "lower-case id", 400, `card id "abc": only digits and capital letters`)
	b.do("PUT", "/api/admin/cards/learn", `{"action":"stop"}`).want(t, "id learn", 400, "")
	b.do("PUT", "/api/admin/cards/77", `{"action":"folder","folder_id":"nope"}`).want(t, "unknown folder", 400, `folder_id "nope" is not in the library`)
	b.do("PUT", "/api/admin/cards/77", `{"action":"dance"}`).want(t, "unknown action", 400, "")
	b.do("PUT", "/api/admin/cards/77", `{"action":"stop","colour":"red"}`).want(t, "unknown field", 400, `unknown field "colour"`)
	b.do("DELETE", "/api/admin/cards/77", "").want(t, "delete unmapped", 404, "card 77 has no mapping")
	b.do("PUT", "/api/admin/cards", `{"same_card":"sometimes"}`).want(t, "bad same_card", 400, "")
	b.do("GET", "/api/admin/cards/learn?wait=99", "").want(t, "long wait", 400, "wait must be 0..25 seconds")
	b.do("POST", "/api/admin/cards/learn", `{"timeout_seconds":0}`).want(t, "no timeout", 400, "")
	b.do("DELETE", "/api/admin/cards/unknown/0004921380", "").want(t, "forget assigned", 404, "")
	if u := b.list("/api/admin/cards/unknown"); len(u) != 0 {
		t.Errorf("assigned card still unknown: %v", u)
	}
	b.do("PUT", "/api/admin/cards/00000001", `{"action":"stop"}`).want(t, "stop card", 200, "")
	b.do("PUT", "/api/admin/cards/00000002", `{"action":"resume","folder_id":"`+folderB+`"}`).want(t, "resume card", 200, "")
	doc := b.do("GET", "/api/admin/cards", "").want(t, "cards", 200, "")
	if n := len(doc.body["cards"].(map[string]any)); n != 3 || doc.body["same_card"] != "continue" {
		t.Errorf("cards: %s", doc.raw)
	}

	// Placing it starts the folder.
	if r := b.place("0004921380"); r["outcome"] != cards.OutStarted || r["folder_id"] != folderA {
		t.Fatalf("assigned card: %v", r)
	}
	waitUntil(t, "the folder plays", 10*time.Second, func() bool {
		st := b.status()
		return st["state"] == "playing" && st["folder_id"] == folderA
	})
	post(t, b.base, `{"action":"seek","value":10}`)
	// Within 2 s: nothing at all.
	if r := b.typeCard("0004921380"); r["outcome"] != cards.OutRepeat {
		t.Errorf("again at once: %v", r)
	}
	// Later: it plays on, not from the start.
	if r := b.place("0004921380"); r["outcome"] != cards.OutUnchanged {
		t.Errorf("again later: %v", r)
	}
	if st := b.status(); st["position"].(float64) < 10 || st["folder_id"] != folderA {
		t.Errorf("the folder restarted: %v", st)
	}
	// A stop card stops.
	if r := b.place("00000001"); r["outcome"] != cards.OutDone {
		t.Errorf("stop card: %v", r)
	}
	waitUntil(t, "stopped", 10*time.Second, func() bool { return b.status()["state"] == "stopped" })

	// Unplugged in the middle of a number, plugged in again.
	if err := b.devs.Type(ctx, readerPath, "00049", false); err != nil {
		t.Fatal(err)
	}
	b.devs.Unplug(readerPath)
	b.waitDevices(1)
	b.devs.Plug(readerPath, inputtest.Reader)
	b.waitDevices(2)
	if r := b.place("0004921380"); r["id"] != "0004921380" || r["outcome"] != cards.OutStarted {
		t.Errorf("after the replug: %v", r)
	}

	// toggle_pause: the playing card pauses, and continues.
	b.do("PUT", "/api/admin/cards", `{"same_card":"toggle_pause","sounds":false}`).want(t, "toggle", 200, "")
	waitUntil(t, "playing", 10*time.Second, func() bool { return b.status()["state"] == "playing" })
	if r := b.place("0004921380"); r["outcome"] != cards.OutPaused {
		t.Errorf("toggle: %v", r)
	}
	if r := b.place("0004921380"); r["outcome"] != cards.OutContinued {
		t.Errorf("toggle again: %v", r)
	}

	// Another unknown card, then a restart: everything is still there.
	b.place("1234ABCD")
	b.stop()
	if _, err := cards.Load(data, nil); err != nil {
		t.Fatal(err)
	}
	var unknown []cards.Unknown
	if err := state.ReadJSON(filepath.Join(data, cards.UnknownFileName), &unknown); err != nil || len(unknown) != 1 || unknown[0].ID != "1234ABCD" {
		t.Errorf("unknown file: %v %+v", err, unknown)
	}
	b2 := startCardBox(t, media, data, nil)
	doc = b2.do("GET", "/api/admin/cards", "").want(t, "cards after restart", 200, "")
	if n := len(doc.body["cards"].(map[string]any)); n != 3 || doc.body["same_card"] != "toggle_pause" {
		t.Errorf("after restart: %s", doc.raw)
	}
	if u := b2.list("/api/admin/cards/unknown"); len(u) != 1 || u[0]["id"] != "1234ABCD" {
		t.Errorf("unknown after restart: %v", u)
	}
	b2.do("DELETE", "/api/admin/cards/unknown/1234ABCD", "").want(t, "forget", 200, "")
	b2.do("DELETE", "/api/admin/cards/0004921380", "").want(t, "delete", 200, "")
}

// Media keys and the input wiring: play/pause toggles, the wiring is saved
// and applied at once, and a held power key powers the box off after
// saving the state.
func TestMediaKeysAndPowerButton(t *testing.T) {
	media, data := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {30, 30}, "Hoerspiele/Folge B": {30}}), t.TempDir()
	powered := make(chan struct{}, 1)
	b := startCardBox(t, media, data, func(c *setup) {
		c.powerOff = func(context.Context) error { powered <- struct{}{}; return nil }
	})
	folderA, _ := folderIDs(t, b.base)
	post(t, b.base, `{"action":"folder","folder_id":"`+folderA+`"}`)
	kbd := "/dev/input/event1"
	b.devs.Plug(kbd, inputtest.Keyboard)
	b.waitDevices(1)
	ctx := context.Background()
	b.devs.Key(ctx, kbd, evdev.KEY_PLAYPAUSE, true)
	b.devs.Key(ctx, kbd, evdev.KEY_PLAYPAUSE, false)
	waitUntil(t, "paused by the key", 10*time.Second, func() bool { return b.status()["state"] == "paused" })

	b.do("PUT", "/api/admin/input", `{"long_press_ms":100}`).want(t, "too short", 400, "long_press_ms must be 500..10000")
	b.do("PUT", "/api/admin/input", `{"gpio":{"buttons":[{"line":17,"action":"power_off"}]}}`).want(t, "power on a tap", 400, "gpio.buttons[0]: power_off only as long_action")
	in := b.do("PUT", "/api/admin/input", `{"long_press_ms":500,"gpio":{"buttons":[{"line":17,"action":"toggle","long_action":"power_off"}]}}`).want(t, "wiring", 200, "")
	w := in.body["wiring"].(map[string]any)
	if w["long_press_ms"] != 500.0 || w["media_keys"] != true || len(w["readers"].([]any)) != len(wiring.DefaultReaders()) {
		t.Errorf("wiring: %s", in.raw)
	}
	if _, err := os.Stat(filepath.Join(data, wiring.FileName)); err != nil {
		t.Errorf("wiring not saved: %v", err)
	}
	// Applied at once: the keyboard is claimed anew under the new wiring.
	b.waitDevices(1)
	b.devs.Key(ctx, kbd, evdev.KEY_POWER, true)
	select {
	case <-powered:
	case <-time.After(10 * time.Second):
		t.Fatal("a held power key did not power off")
	}
}
