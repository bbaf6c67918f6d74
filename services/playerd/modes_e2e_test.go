package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// counterWAV writes a 48 kHz track whose left channel is level and whose
// right channel counts its samples modulo 1000, so the speaker's file
// tells exactly which sample of which track was heard.
func counterWAV(t *testing.T, path string, seconds float64, level int16) {
	t.Helper()
	frames := make([][2]int16, int(seconds*48000))
	for i := range frames {
		frames[i] = [2]int16{level, int16(i % 1000 * 30)}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, testmedia.WAV(48000, frames), 0o644); err != nil {
		t.Fatal(err)
	}
}

// speakerFrames reads the wav sink's file as stereo frames.
func speakerFrames(t *testing.T, path string) [][2]int16 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = b[44:]
	out := make([][2]int16, len(b)/4)
	for i := range out {
		out[i] = [2]int16{int16(binary.LittleEndian.Uint16(b[4*i:])), int16(binary.LittleEndian.Uint16(b[4*i+2:]))}
	}
	return out
}

// A parent sets a folder's mode: the library shows it, it survives a
// restart, and the folder then starts in it. Bad input changes nothing.
func TestFolderModeSetByAParent(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"Lieder": {20, 20, 20, 20}, "Andere": {20}}); err != nil {
		t.Fatal(err)
	}
	base, stop := startBox(t, media, data)
	c := client(t, base)
	ids := folderIDsByName(t, base)
	path := "/api/admin/library/folders/" + ids["Lieder"] + "/mode"
	c.do("PUT", path, `{"mode":"party"}`).want(t, "an unknown mode", 400, "")
	if r := c.do("PUT", path, `{"mode":"party"}`); r.body["code"] != "unknown_mode" {
		t.Errorf("unknown mode: %s", r.raw)
	}
	c.do("PUT", path, `{}`).want(t, "no mode", 400, "")
	c.do("PUT", "/api/admin/library/folders/"+ids["Lieder"]+"x/mode", `{"mode":"shuffle"}`).want(t, "an unknown folder", 404, "")
	modes := func() map[string]any {
		m := map[string]any{}
		for _, f := range getJSON[[]map[string]any](t, base+"/api/library") {
			m[f["name"].(string)] = f["mode"]
		}
		return m
	}
	if m := modes(); m["Lieder"] != "normal" || m["Andere"] != "normal" {
		t.Fatalf("modes before: %v", m)
	}
	if r := c.ok("PUT", path, `{"mode":"shuffle"}`); r.body["mode"] != "shuffle" || r.body["id"] != ids["Lieder"] {
		t.Errorf("answer: %s", r.raw)
	}
	stop()

	base, _ = startBox(t, media, data)
	c = client(t, base)
	if m := modes(); m["Lieder"] != "shuffle" || m["Andere"] != "normal" {
		t.Fatalf("modes after a restart: %v", m)
	}
	st := c.command(`{"action":"folder","folder_id":"` + ids["Lieder"] + `"}`)
	if st["mode"] != "shuffle" || st["shuffle"] != true || st["repeat"] != "off" {
		t.Errorf("the folder started as %v %v %v", st["mode"], st["shuffle"], st["repeat"])
	}
	// A card's override, and the switches changed for the queue.
	st = c.command(`{"action":"folder","folder_id":"` + ids["Lieder"] + `","mode":"repeat_one"}`)
	if st["mode"] != "repeat_one" || st["shuffle"] != false || st["repeat"] != "track" {
		t.Errorf("the override started as %v %v %v", st["mode"], st["shuffle"], st["repeat"])
	}
	if st = c.command(`{"action":"repeat","value":"folder"}`); st["repeat"] != "folder" || st["mode"] != "repeat_one" {
		t.Errorf("repeat folder: %v %v", st["repeat"], st["mode"])
	}
	c.do("POST", "/api/command", `{"action":"repeat","value":"album"}`).want(t, "repeat album", 400, "")
	c.do("POST", "/api/command", `{"action":"shuffle","value":"yes"}`).want(t, "shuffle yes", 400, "")
	stream := openStream(t, base, "")
	defer stream.close()
	stream.next(t) // the status
	if st = c.command(`{"action":"shuffle","value":true}`); st["shuffle"] != true || st["repeat"] != "folder" {
		t.Errorf("shuffle on: %v %v", st["shuffle"], st["repeat"])
	}
	stream.until(t, "the modes event", func(e sseEvent) bool {
		return e.Event == "modes" && strings.Contains(e.Data, `"shuffle":true,"repeat":"folder","mode":"repeat_one"`)
	})
}

// repeat_one loops a 2 s track three times on the speaker, each loop
// joined on the sample after the last one's end.
func TestRepeatOneLoopsOnTheSpeaker(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	counterWAV(t, filepath.Join(media, "Lied", "a.wav"), 2, 8000)
	counterWAV(t, filepath.Join(media, "Lied", "b.wav"), 2, 16000)
	wav := filepath.Join(t.TempDir(), "speaker.wav")
	base, stop := startBoxWith(t, media, data, func(c *setup) { c.Output = "wav:" + wav })
	c := client(t, base)
	// The samples are compared as written: no loudness gain on top.
	c.ok("PUT", "/api/admin/settings", `{"audio":{"normalize":"off"}}`)
	ids := folderIDsByName(t, base)
	c.command(`{"action":"folder","folder_id":"` + ids["Lied"] + `","mode":"repeat_one"}`)
	loops, last := 0, 0.0
	waitStatus(t, c, "three loops", func(st map[string]any) bool {
		if st["index"] != 0.0 {
			t.Fatalf("repeat_one moved on: %v", st)
		}
		if pos := st["position"].(float64); pos < last {
			loops++
		}
		last = st["position"].(float64)
		// Half a second into the fourth pass: the pause's fade takes back
		// only what the device has not played, far less than that.
		return loops >= 3 && last >= 0.5
	})
	c.command(`{"action":"pause"}`)
	stop()
	heard := speakerFrames(t, wav)
	first := 0
	for first < len(heard) && heard[first][0] == 0 {
		first++
	}
	first-- // the fade-in starts at silence: the track's first sample is heard as 0
	const track = 96000
	if len(heard)-first < 3*track {
		t.Fatalf("heard %d frames", len(heard)-first)
	}
	// The gain, from a sample whose counter is 999 (after the fade-in).
	g := float64(heard[first+999][1]) / (999 * 30)
	for i := first + 240; i < first+3*track; i++ {
		n := (i - first) % track
		if want := float64(n%1000*30) * g; math.Abs(float64(heard[i][1])-want) > 1.5 || heard[i][0] != heard[first+500][0] {
			t.Fatalf("frame %d of loop %d is %v, want track a's sample %d (%.0f)", n, (i-first)/track, heard[i], n, want)
		}
	}
}

// single stops after one track and the next start plays the next;
// random_one never plays the previous start's track again in 50 starts.
func TestSingleAndRandomOneStarts(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	for i, name := range []string{"a", "b", "c"} {
		counterWAV(t, filepath.Join(media, "Kurz", name+".wav"), 0.3, int16(4000*(i+1)))
	}
	wav := filepath.Join(t.TempDir(), "speaker.wav")
	base, stop := startBoxWith(t, media, data, func(c *setup) { c.Output = "wav:" + wav })
	c := client(t, base)
	id := folderIDsByName(t, base)["Kurz"]
	c.ok("PUT", "/api/admin/library/folders/"+id+"/mode", `{"mode":"single"}`)
	for _, want := range []float64{0, 1, 2, 0} {
		if st := c.command(`{"action":"folder","folder_id":"` + id + `"}`); st["index"] != want || st["state"] != "playing" {
			t.Fatalf("single start: index %v (%v), want %v", st["index"], st["state"], want)
		}
		waitStatus(t, c, "the end of the track", func(st map[string]any) bool { return st["state"] == "stopped" })
	}
	stop()
	// Four starts, four tracks of 0.3 s each: nothing more was heard.
	heard := 0
	for _, f := range speakerFrames(t, wav) {
		if f[0] != 0 {
			heard++
		}
	}
	if heard < 4*14400-4*240 || heard > 4*14400 {
		t.Errorf("heard %d frames of music, want four tracks of 14400", heard)
	}

	base, _ = startBoxWith(t, media, data, func(c *setup) { c.Output = "null" })
	c = client(t, base)
	c.ok("PUT", "/api/admin/library/folders/"+id+"/mode", `{"mode":"random_one"}`)
	prev, seen := -1.0, map[float64]bool{}
	for i := range 50 {
		st := c.command(`{"action":"folder","folder_id":"` + id + `"}`)
		if st["index"] == prev {
			t.Fatalf("start %d played track %v again", i, prev)
		}
		prev = st["index"].(float64)
		seen[prev] = true
	}
	waitStatus(t, c, "the end of the track", func(st map[string]any) bool { return st["state"] == "stopped" && st["index"] == prev })
	if len(seen) != 3 {
		t.Errorf("50 starts played %v", seen)
	}
}

// seek_delta clamps at both ends of a track; a station refuses it.
func TestSeekDeltaAtBothEnds(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"Buch": {30, 30}}); err != nil {
		t.Fatal(err)
	}
	base, _ := startBox(t, media, data)
	c := client(t, base)
	id := folderIDsByName(t, base)["Buch"]
	c.command(`{"action":"folder","folder_id":"` + id + `"}`)
	c.command(`{"action":"pause"}`)
	c.command(`{"action":"seek","value":4}`)
	if st := c.command(`{"action":"seek_delta","value":-10}`); st["position"] != 0.0 || st["index"] != 0.0 {
		t.Errorf("−10 s at 4 s: %v in %v", st["position"], st["index"])
	}
	if st := c.command(`{"action":"seek_delta","value":12.5}`); math.Abs(st["position"].(float64)-12.5) > 0.01 {
		t.Errorf("+12.5 s: %v", st["position"])
	}
	if st := c.command(`{"action":"seek_delta","value":100}`); math.Abs(st["position"].(float64)-30) > 0.01 || st["index"] != 0.0 {
		t.Errorf("+100 s at 12.5 s: %v in %v, want the end of the track", st["position"], st["index"])
	}
	c.command(`{"action":"play"}`)
	waitStatus(t, c, "the next track", func(st map[string]any) bool { return st["index"] == 1.0 })
	c.do("POST", "/api/command", `{"action":"seek_delta"}`).want(t, "no value", 400, "")
	c.do("POST", "/api/command", `{"action":"seek_delta","value":"10"}`).want(t, "a word", 400, "")
}

// kill -9 of a shuffled queue: the restarted box continues the order that
// was on disk, in the same track, and resume of the folder later too.
func TestShuffleOrderSurvivesKillNine(t *testing.T) {
	bin := buildPlayerd(t)
	media, data := t.TempDir(), t.TempDir()
	for i := range 6 {
		if err := testmedia.WriteTone(filepath.Join(media, "Lieder", fmt.Sprintf("Lied %d.wav", i+1)), 30, 8000, 220*float64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	b := startPlayerd(t, bin, media, data)
	id := b.folderIDs1(t)
	c := client(t, b.base)
	c.command(`{"action":"folder","folder_id":"` + id + `","mode":"shuffle"}`)
	c.command(`{"action":"pause"}`)
	c.command(`{"action":"next"}`)
	at := c.command(`{"action":"next"}`)["index"].(float64)
	// The kill comes once the state the box acknowledged is on disk.
	var disk state.Saved
	waitUntil(t, "the queue on disk", 10*time.Second, func() bool {
		var err error
		disk, err = state.Load(data)
		return err == nil && disk.Queue != nil && float64(disk.Queue.Index) == at && len(disk.Queue.Order) == 6
	})
	order := disk.Queue.Order
	if !disk.Queue.Shuffle || disk.Queue.Mode != "shuffle" || order[2] != int(at) {
		t.Fatalf("on disk: %+v, at %v", disk.Queue, at)
	}
	b.kill(t)

	b = startPlayerd(t, bin, media, data)
	c = client(t, b.base)
	st := c.do("GET", "/api/status", "").body
	if st["index"] != at || st["shuffle"] != true || st["mode"] != "shuffle" || st["state"] != "paused" {
		t.Fatalf("after kill -9: index %v shuffle %v mode %v state %v, want %v shuffled and paused", st["index"], st["shuffle"], st["mode"], st["state"], at)
	}
	got := []int{int(at)}
	for range 2 {
		got = append(got, int(c.command(`{"action":"next"}`)["index"].(float64)))
	}
	if fmt.Sprint(got) != fmt.Sprint(order[2:5]) {
		t.Errorf("after kill -9 played %v, want the order on disk %v", got, order[2:5])
	}
	// Left at the fifth of the order: resume continues with the sixth.
	c.command(`{"action":"seek","value":8}`)
	st = c.command(fmt.Sprintf(`{"action":"resume","folder_id":%q,"item_index":%d}`, id, order[4]))
	if st["index"] != float64(order[4]) || st["position"].(float64) < 8 {
		t.Errorf("resume: index %v at %v, want %d at 8 s", st["index"], st["position"], order[4])
	}
	if next := c.command(`{"action":"next"}`)["index"]; next != float64(order[5]) {
		t.Errorf("after resume, next is %v, want %d", next, order[5])
	}
}
