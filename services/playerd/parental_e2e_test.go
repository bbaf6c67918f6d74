package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// berlin is the settings' default time zone, which the rules go by.
var berlin = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return loc
}()

// keeperSawPlaying is true once the rules have looked at the music playing:
// they count the listening from that look on, and a status (which brings the
// count up to date) between the start and that look lets a jump of the
// test's clock pass uncounted. The player wakes the rules at every whole
// second of the position, so at 2 s they were woken at 1 s, a second before;
// a position just after the start is no sign (under load, CI saw the jump
// missed).
func keeperSawPlaying(st map[string]any) bool {
	return st["state"] == "playing" && st["position"].(float64) >= 2
}

// monday is a Monday at hour:minute in Berlin.
func monday(hour, minute int) time.Time {
	return time.Date(2026, 3, 23, hour, minute, 0, 0, berlin)
}

const everyNight = `{"mon":{"start":"19:30","end":"07:00"},"tue":{"start":"19:30","end":"07:00"},"wed":{"start":"19:30","end":"07:00"},` +
	`"thu":{"start":"19:30","end":"07:00"},"fri":{"start":"19:30","end":"07:00"},"sat":{"start":"19:30","end":"07:00"},"sun":{"start":"19:30","end":"07:00"}}`

func everyDay(minutes int) string {
	var parts []string
	for _, d := range rules.Weekdays {
		parts = append(parts, fmt.Sprintf("%q:%d", d, minutes))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// levelWAV writes a 48 kHz track whose left channel is one constant level,
// so what the speaker hears shows the gain sample by sample.
func levelWAV(t *testing.T, path string, seconds float64) {
	t.Helper()
	frames := make([][2]int16, int(seconds*48000))
	for i := range frames {
		frames[i] = [2]int16{16000, 0}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, testmedia.WAV(48000, frames), 0o644); err != nil {
		t.Fatal(err)
	}
}

// folderIDsByName maps folder names to ids.
func folderIDsByName(t *testing.T, base string) map[string]string {
	ids := map[string]string{}
	for _, f := range getJSON[[]map[string]any](t, base+"/api/library") {
		ids[f["name"].(string)] = f["id"].(string)
	}
	return ids
}

func restrictions(st map[string]any) map[string]any {
	m, _ := st["restrictions"].(map[string]any)
	return m
}

// The same start is refused the same way whichever path it takes: the API,
// the touch screen (the display's command function, which taps use), and a
// command from inside the box that names no caller (the path a future
// home-automation API takes). Bedtime content plays under the night
// maximum, a locked folder is a parent's, and an administrator session may
// override.
func TestParentalGateOnEveryPath(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Tag": {30}, "Abend": {30}, "Geheim": {30}})
	clk := testClock(monday(20, 0))
	started := make(chan *running, 1)
	logs := &logTap{}
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) {
		c.clock, c.log = clk, logs
		c.onStart = func(x *running) { started <- x }
	})
	defer stop()
	a := <-started
	ids := folderIDsByName(t, base)
	c := &caller{t: t, base: base, hc: &http.Client{}}
	sub := a.core.Changes().Subscribe()
	defer sub.Close()
	c.do("PUT", "/api/admin/parental", `{"bedtime":{"windows":`+everyNight+`,"folders":["`+ids["Abend"]+`"],"night_max_volume":25},`+
		`"locked_folders":["`+ids["Geheim"]+`"]}`).want(t, "rules", 200, "")
	// Bedtime is in force at once, and the event feed says so.
	for {
		ev, err := sub.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev == nil {
			select {
			case <-sub.Ready():
			case <-time.After(10 * time.Second): // only bounds a hang
				t.Fatal("no restrictions event after the rules changed")
			}
			continue
		}
		if r, ok := ev.Payload.(rules.Restrictions); ev.Kind == events.KindRestrictions && ok && r.Active != nil && *r.Active == rules.ReasonBedtime {
			break
		}
	}

	until := time.Date(2026, 3, 24, 7, 0, 0, 0, berlin)
	refused := func(r reply, what, reason, msg string) {
		t.Helper()
		r.want(t, what, 403, msg)
		got, err := time.Parse(time.RFC3339, fmt.Sprint(r.body["until"]))
		if r.body["reason"] != reason || reason == rules.ReasonBedtime && (err != nil || !got.Equal(until)) {
			t.Errorf("%s: body %s", what, r.raw)
		}
	}
	refused(c.do("POST", "/api/command", `{"action":"folder","folder_id":"`+ids["Tag"]+`"}`), "API folder", "bedtime", "bedtime until 07:00")
	refused(c.do("POST", "/api/command", `{"action":"resume","folder_id":"`+ids["Tag"]+`","item_index":0}`), "API resume", "bedtime", "bedtime until 07:00")
	touch := func(cmd player.Command) error { return a.display.Command(context.Background(), cmd) }
	var r *rules.Refusal
	if err := touch(player.Command{Action: player.ActFolder, FolderID: ids["Tag"]}); !errors.As(err, &r) || r.Msg != "bedtime until 07:00" || !r.Until.Equal(until) {
		t.Errorf("touch folder: %v", err)
	}
	if m := c.do("GET", "/api/message", "").body; m == nil || m["title"] != "Schlafenszeit" {
		t.Errorf("the screen after a refused tap: %v", m)
	}
	if _, err := a.core.Player().Do(context.Background(), player.Command{Action: player.ActFolder, FolderID: ids["Tag"]}); !errors.As(err, &r) || r.Reason != rules.ReasonBedtime {
		t.Errorf("internal path: %v", err)
	}

	// Bedtime content plays, never above the night maximum.
	st := c.do("POST", "/api/command", `{"action":"folder","folder_id":"`+ids["Abend"]+`"}`).want(t, "bedtime content", 200, "").body
	if st["state"] != "playing" || st["max_volume"] != 25.0 {
		t.Errorf("bedtime content: %v", st)
	}
	if st := c.do("POST", "/api/command", `{"action":"volume","value":80}`).body; st["volume"] != 25.0 {
		t.Errorf("API volume over the night maximum: %v", st["volume"])
	}
	if err := touch(player.Command{Action: player.ActVolumeDelta, Value: ptr(50.0)}); err != nil || a.core.Player().Status().Volume != 25 {
		t.Errorf("touch volume over the night maximum: %v, %d", err, a.core.Player().Status().Volume)
	}
	res := restrictions(c.do("GET", "/api/status", "").body)
	if res["active"] != "bedtime" || res["message"] != "bedtime until 07:00" || res["clock"] != "set" {
		t.Errorf("restrictions: %v", res)
	}
	// Pausing and playing bedtime content again is fine; play of ordinary
	// music (toggle from pause) is refused like a start.
	if err := touch(player.Command{Action: player.ActToggle}); err != nil {
		t.Error(err)
	}
	if err := touch(player.Command{Action: player.ActToggle}); err != nil {
		t.Error(err)
	}

	// A locked folder: not on the home screen, refused to everyone without
	// a session.
	if home := c.do("GET", "/api/home", "").raw; strings.Contains(home, ids["Geheim"]) || !strings.Contains(home, ids["Tag"]) {
		t.Errorf("home screen and the locked folder: %s", home)
	}
	refused(c.do("POST", "/api/command", `{"action":"folder","folder_id":"`+ids["Geheim"]+`"}`), "API locked", "locked", "folder is locked")
	if err := touch(player.Command{Action: player.ActFolder, FolderID: ids["Geheim"]}); !errors.As(err, &r) || r.Reason != rules.ReasonLocked {
		t.Errorf("touch locked: %v", err)
	}

	// The sleep timer from the touch screen: set, shown in the status.
	if err := touch(player.Command{Action: player.ActSleepTimer, Value: ptr(15.0)}); err != nil {
		t.Fatal(err)
	}
	if s, _ := restrictions(c.do("GET", "/api/status", "").body)["sleep_timer"].(map[string]any); s == nil || s["minutes"] != 15.0 || s["left_seconds"] != 900.0 {
		t.Errorf("sleep timer after a tap: %v", s)
	}

	// A parent overrides, and it is logged; the child still cannot.
	c.do("PUT", "/api/admin/password", `{"new_password":"`+pw1+`"}`).want(t, "password", 200, "")
	session := c.do("POST", "/api/admin/login", `{"password":"`+pw1+`"}`).want(t, "login", 200, "").session()
	c.do("POST", "/api/command", `{"action":"folder","folder_id":"`+ids["Tag"]+`"}`, "Cookie", session).want(t, "parent's start", 200, "")
	if !strings.Contains(logs.String(), "parental rule overridden") {
		t.Error("the override is not logged")
	}
	c.do("POST", "/api/command", `{"action":"pause"}`).want(t, "pause", 200, "")
	refused(c.do("POST", "/api/command", `{"action":"play"}`), "child's play after the parent's start", "bedtime", "bedtime until 07:00")
	// The rules are the administrator's now.
	c.do("PUT", "/api/admin/parental", `{}`).want(t, "rules without a session", 401, "")
}

func ptr[T any](v T) *T { return &v }

// The daily limit end to end, heard on the wav output: once the minutes
// are used the music fades out over seconds (the gain only goes down),
// pauses, and starting is refused with the reason and until midnight; the
// volume is back for tomorrow.
func TestDailyLimitFadesOutOnTheSpeaker(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	levelWAV(t, filepath.Join(media, "Tag", "Folge 1.wav"), 300)
	wav := filepath.Join(t.TempDir(), "speaker.wav")
	clk := testClock(monday(10, 0))
	started := make(chan *running, 1)
	base, stop := startBoxWith(t, media, data, func(c *setup) {
		c.clock, c.Output = clk, "wav:"+wav
		c.onStart = func(x *running) { started <- x }
	})
	defer stop()
	a := <-started
	ids := folderIDsByName(t, base)
	c := &caller{t: t, base: base, hc: &http.Client{}}
	c.do("PUT", "/api/admin/parental", `{"daily_limit_minutes":`+everyDay(1)+`}`).want(t, "rules", 200, "")
	c.do("POST", "/api/command", `{"action":"folder","folder_id":"`+ids["Tag"]+`"}`).want(t, "folder", 200, "")
	st := waitStatus(t, c, "the keeper counting", keeperSawPlaying)
	vol := st["volume"].(float64)

	// 4 s are left: the fade begins, and the music pauses when it is over.
	clk.Advance(56 * time.Second)
	waitStatus(t, c, "the pause", func(st map[string]any) bool { return st["state"] == "paused" })
	st = waitStatus(t, c, "the volume back", func(st map[string]any) bool { return st["volume"].(float64) == vol })
	lim := restrictions(st)["daily_limit"].(map[string]any)
	if lim["reached"] != true || lim["left_seconds"] != 0.0 || restrictions(st)["active"] != "daily_limit" {
		t.Errorf("restrictions after the limit: %v", restrictions(st))
	}
	r := c.do("POST", "/api/command", `{"action":"play"}`).want(t, "play after the limit", 403, "daily limit reached")
	if r.body["reason"] != "daily_limit" || r.body["until"] != time.Date(2026, 3, 24, 0, 0, 0, 0, berlin).Format(time.RFC3339) {
		t.Errorf("refusal: %s", r.raw)
	}
	if err := a.display.Command(context.Background(), player.Command{Action: player.ActToggle}); err == nil || err.Error() != "daily limit reached" {
		t.Errorf("touch after the limit: %v", err)
	}
	stop()

	levels := leftChannel(t, wav)
	first := 0
	for first < len(levels) && levels[first] == 0 {
		first++
	}
	last := len(levels) - 1
	for last > first && levels[last] == 0 {
		last--
	}
	first += 240 // the 5 ms fade-in of the start
	if last-first < 48000 {
		t.Fatalf("only %d frames heard", last-first)
	}
	// Sample by sample the level never rises (a rounding step aside); in
	// tenths of a second it falls step by step, to almost nothing.
	for i := first + 1; i <= last; i++ {
		if levels[i] > levels[i-1]+1 {
			t.Fatalf("the level rises at frame %d: %d after %d", i, levels[i], levels[i-1])
		}
	}
	steps := 0
	for i := first + 4800; i <= last; i += 4800 {
		if levels[i] < levels[i-4800]-1 {
			steps++
		}
	}
	if levels[last] > levels[first]/10 || steps < 10 {
		t.Errorf("fade from %d to %d, falling in %d tenths of a second", levels[first], levels[last], steps)
	}
	t.Logf("heard %.1f s; the level fell from %d to %d, in %d tenths of a second", float64(last-first)/48000, levels[first], levels[last], steps)
}

// leftChannel reads the left channel of the wav sink's file.
func leftChannel(t *testing.T, path string) []int16 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = b[44:]
	out := make([]int16, len(b)/4)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(b[4*i:]))
	}
	return out
}

// The counter survives a restart on the same day and starts again from
// zero at local midnight.
func TestDailyCounterAcrossRestartAndMidnight(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"Tag": {60}}); err != nil {
		t.Fatal(err)
	}
	clk := testClock(monday(23, 50))
	base, stop := startBoxWith(t, media, data, func(c *setup) { c.clock = clk })
	ids := folderIDsByName(t, base)
	c := &caller{t: t, base: base, hc: &http.Client{}}
	c.do("PUT", "/api/admin/parental", `{"daily_limit_minutes":`+everyDay(30)+`}`).want(t, "rules", 200, "")
	c.do("POST", "/api/command", `{"action":"folder","folder_id":"`+ids["Tag"]+`"}`).want(t, "folder", 200, "")
	waitStatus(t, c, "the keeper counting", keeperSawPlaying)
	clk.Advance(5 * time.Minute)
	used := func(st map[string]any) float64 {
		return restrictions(st)["daily_limit"].(map[string]any)["used_seconds"].(float64)
	}
	waitStatus(t, c, "5 minutes counted", func(st map[string]any) bool { return used(st) >= 300 })
	c.do("POST", "/api/command", `{"action":"pause"}`).want(t, "pause", 200, "")
	stop()

	clk2 := testClock(monday(23, 57))
	base, stop = startBoxWith(t, media, data, func(c *setup) { c.clock = clk2 })
	defer stop()
	c = &caller{t: t, base: base, hc: &http.Client{}}
	if u := used(c.do("GET", "/api/status", "").body); u < 300 || u > 302 {
		t.Errorf("after the restart: %v s used", u)
	}
	clk2.Advance(3*time.Minute + time.Second) // 00:00:01 on Tuesday
	if u := used(c.do("GET", "/api/status", "").body); u != 0 {
		t.Errorf("after midnight: %v s used", u)
	}
}

// kill -9 (a power cut, for the data directory) while music plays: the
// counter on disk is at most 30 s behind (it is written with the position,
// every 8 s), and the box comes back with at least that much used. After a
// pause it is on disk within a second.
func TestDailyCounterSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds playerd and plays for seconds")
	}
	bin := buildPlayerd(t)
	media, data := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"Tag": {60}}); err != nil {
		t.Fatal(err)
	}
	if err := state.WriteFile(filepath.Join(data, rules.FileName), []byte(`{"daily_limit_minutes":`+everyDay(600)+`}`)); err != nil {
		t.Fatal(err)
	}
	onDisk := func() float64 {
		var s state.Saved
		if err := state.ReadJSON(filepath.Join(data, state.FileName), &s); err != nil || s.Listening == nil {
			return 0
		}
		return s.Listening.Seconds
	}
	used := func(b *proc) float64 {
		var st struct {
			Restrictions struct {
				DailyLimit struct {
					UsedSeconds float64 `json:"used_seconds"`
				} `json:"daily_limit"`
			} `json:"restrictions"`
		}
		b.get(t, "/api/status", &st)
		return st.Restrictions.DailyLimit.UsedSeconds
	}
	post := func(b *proc, body string) {
		resp, err := b.http.Post(b.base+"/api/command", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s", body, resp.Status)
		}
	}
	waitDisk := func(what string, ok func(float64) bool) (float64, time.Duration) {
		t.Helper()
		start := time.Now()
		var v float64
		waitUntil(t, what+" on disk", 40*time.Second, func() bool { v = onDisk(); return ok(v) })
		return v, time.Since(start)
	}

	b := startPlayerd(t, bin, media, data)
	id := b.folderIDs1(t)
	post(b, `{"action":"folder","folder_id":"`+id+`"}`)
	playing := time.Now()
	v, _ := waitDisk("the counter while playing", func(v float64) bool { return v >= 3 })
	v2, took := waitDisk("the counter written again", func(x float64) bool { return x > v })
	if since := time.Since(playing); took > 30*time.Second {
		t.Errorf("the counter was written again after %v of playing (%v after the last)", since, took)
	}
	b.kill(t)
	b = startPlayerd(t, bin, media, data)
	if u := used(b); u < math.Floor(v2) {
		t.Errorf("after kill -9: %v s used, %v s were on disk", u, v2)
	}
	t.Logf("played %.1f s before the kill, %.1f s on disk; the counter was rewritten %v after the previous write",
		time.Since(playing).Seconds(), v2, took.Round(time.Millisecond))

	post(b, `{"action":"folder","folder_id":"`+id+`"}`)
	waitStatusBox(t, b, func(pos float64) bool { return pos > 1.5 })
	post(b, `{"action":"pause"}`)
	paused := used(b)
	_, took = waitDisk("the counter after the pause", func(x float64) bool { return x >= paused })
	if took > 2*time.Second {
		t.Errorf("the counter reached the disk %v after the pause", took)
	}
	b.kill(t)
	b = startPlayerd(t, bin, media, data)
	if u := used(b); u < paused {
		t.Errorf("after pause and kill -9: %v s used, want %v", u, paused)
	}
	b.kill(t)
}

// folderIDs1 is the id of the one folder of the library.
func (b *proc) folderIDs1(t *testing.T) string {
	t.Helper()
	var lib []struct {
		ID string `json:"id"`
	}
	waitUntil(t, "the library's folder", 60*time.Second, func() bool { b.get(t, "/api/library", &lib); return len(lib) == 1 })
	return lib[0].ID
}

// waitStatusBox polls a playerd process until the position satisfies ok.
func waitStatusBox(t *testing.T, b *proc, ok func(float64) bool) {
	t.Helper()
	waitUntil(t, "the position", 20*time.Second, func() bool {
		var st status
		b.get(t, "/api/status", &st)
		return ok(st.Position)
	})
}

// The home-automation API's commands meet the same gate: play of a locked
// folder that a parent started and paused is refused there too, in that
// API's error shape, with the rule's message.
func TestParentalGateOnHomeAutomation(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Geheim": {30}})
	clock := testClock(time.Now())
	b := startHABox(t, media, t.TempDir(), clock)
	defer func() { b.stop() }()
	_, digest := probe(t, b.haAddr)
	resp, err := pinnedClient(digest).Get(b.v1 + "/tls/ca")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c := caClient(t, caPEM)
	token, _ := b.pair(t, c, homeAssistant, `["read","control"]`)["access_token"].(string)

	id := getJSON[[]map[string]any](t, b.base+"/api/library")[0]["id"].(string)
	if st, body := b.adminDo(t, "PUT", "/api/admin/parental", `{"locked_folders":["`+id+`"]}`); st != 200 {
		t.Fatalf("rules: %d %v", st, body)
	}
	if st, body := b.adminDo(t, "PUT", "/api/admin/password", `{"new_password":"`+pw1+`"}`); st != 200 {
		t.Fatalf("password: %d %v", st, body)
	}
	if st, body := b.adminDo(t, "POST", "/api/command", `{"action":"folder","folder_id":"`+id+`"}`); st != 200 {
		t.Fatalf("the parent starts the locked folder: %d %v", st, body)
	}
	v1(t, c, "POST", b.v1+"/control", token, map[string]any{"command": "pause"}).want(t, "pause", 200, "")
	a := v1(t, c, "POST", b.v1+"/control", token, map[string]any{"command": "play"}).want(t, "play of a locked folder", 403, "forbidden")
	if a.body["message"] != "folder is locked" {
		t.Errorf("refusal %s", a.raw)
	}
	if st := getJSON[map[string]any](t, b.base+"/api/status"); st["state"] != "paused" {
		t.Errorf("after the refusal: %v", st["state"])
	}
}
