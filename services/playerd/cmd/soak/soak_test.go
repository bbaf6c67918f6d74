package main

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

// The fit finds a known slope in noisy samples of the life measured
// longest, and leaves the others out.
func TestFitFindsTheSlope(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var samples []sample
	for i := range 60 { // a short life that grows fast: not the one fitted
		at := start.Add(time.Duration(i) * time.Second)
		samples = append(samples, sample{t: at, life: 1, age: time.Duration(i) * time.Second, goroutines: int64(100 + 10*i)})
	}
	long := start.Add(time.Minute)
	for i := range 720 { // an hour at 5 s: 12 an hour, and noise of ±5
		age := time.Duration(i) * 5 * time.Second
		y := 50 + 12*age.Hours() + float64(rng.IntN(11)-5)
		samples = append(samples, sample{t: long.Add(age), life: 2, age: age, goroutines: int64(math.Round(y))})
	}
	slope, se, n, lives, span := fitWithin(samples, time.Minute, func(x sample) float64 { return float64(x.goroutines) })
	if lives != 1 || n != 708 || math.Abs(span-(59*time.Minute).Hours()) > 0.01 {
		t.Fatalf("fitted %d samples of %d lives over %.2f h, want the long life after its minute of warm-up", n, lives, span)
	}
	if math.Abs(slope-12) > 3*se || se <= 0 || se > 2 {
		t.Errorf("slope %.2f ± %.2f, want 12", slope, se)
	}
}

func TestTrendJudgesLongAndShortLives(t *testing.T) {
	for _, tc := range []struct {
		tr   trend
		pass bool
	}{
		{trend{slope: 15, se: 1, n: 100, span: 0.8, bound: 20, allowance: 10}, true},
		{trend{slope: 25, se: 10, n: 100, span: 0.8, bound: 20, allowance: 10}, false},     // long: the slope itself
		{trend{slope: 300, se: 50, n: 30, span: 1.0 / 60, bound: 20, allowance: 10}, true}, // short: +5 in a minute
		{trend{slope: 1200, se: 50, n: 30, span: 1.0 / 60, bound: 20, allowance: 10}, false},
		{trend{slope: 1e6, n: 2, span: 1.0 / 60, bound: 20, allowance: 10}, true}, // too few samples to say
	} {
		if got := tc.tr.pass(); got != tc.pass {
			t.Errorf("%+v: pass %v, want %v", tc.tr, got, tc.pass)
		}
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 200; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(ds, 0.99); p != 198*time.Millisecond {
		t.Errorf("p99 %v", p)
	}
	if p := percentile(ds, 1); p != 200*time.Millisecond {
		t.Errorf("max %v", p)
	}
}

// The disk after a kill is held to the states seen in the last second
// before it, allowing what the changes in flight may have done.
func TestExplainDisk(t *testing.T) {
	kill := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	seen := func(ago time.Duration, volume int, folder string, index int, pos float64, st string) playerView {
		return playerView{t: kill.Add(-ago), src: "test", volume: volume, maxVolume: 80, folder: folder, index: index, position: pos, state: st}
	}
	v := newViews()
	v.newLife(1)
	v.add(1, seen(5*time.Second, 30, "a", 0, 3, "paused"))
	v.add(1, seen(2*time.Second, 40, "a", 1, 0, "playing"))
	v.add(1, seen(500*time.Millisecond, 45, "a", 1, 1.5, "playing"))
	q := func(folder string, index int, pos float64) *state.Queue {
		return &state.Queue{FolderID: folder, Index: index, Position: pos}
	}
	for _, tc := range []struct {
		disk state.Saved
		ok   bool
	}{
		{state.Saved{Volume: 40, Queue: q("a", 1, 0)}, true},   // the state 2 s before
		{state.Saved{Volume: 45, Queue: q("a", 1, 1.5)}, true}, // newer
		{state.Saved{Volume: 40, Queue: q("a", 1, 1.9)}, true}, // played on
		{state.Saved{Volume: 30, Queue: q("a", 0, 3)}, false},  // older than a second: lost
		{state.Saved{Volume: 40, Queue: q("b", 0, 0)}, false},  // never seen
		{state.Saved{Volume: 40, Queue: q("a", 1, 9)}, false},  // further than it could have played
	} {
		why, held := v.explainDisk(tc.disk, kill)
		if !held || (why == "") != tc.ok {
			t.Errorf("disk %d %+v: %q (held %v), want ok %v", tc.disk.Volume, *tc.disk.Queue, why, held, tc.ok)
		}
	}
	// A command in flight at the kill may have been carried out unseen.
	v.setPending("command-0", &pendingChange{action: "volume", value: 70})
	v.setPending("card", &pendingChange{action: "card", folder: "b"})
	if why, _ := v.explainDisk(state.Saved{Volume: 70, Queue: q("b", 0, 0)}, kill); why != "" {
		t.Errorf("with a volume command and a card in flight: %s", why)
	}
	if why, _ := v.explainDisk(state.Saved{Volume: 71, Queue: q("b", 0, 0)}, kill); why == "" {
		t.Error("a volume nobody asked for was explained")
	}
	// Nothing seen over a second before the kill holds the disk to nothing.
	v.newLife(2)
	v.add(2, seen(100*time.Millisecond, 45, "a", 1, 1.5, "playing"))
	if why, held := v.explainDisk(state.Saved{Volume: 10}, kill); why != "" || held {
		t.Errorf("a life under a second old: %q, held %v", why, held)
	}
}

func TestRestoredAs(t *testing.T) {
	folder := "a"
	disk := state.Saved{Volume: 60, Queue: &state.Queue{FolderID: folder, Index: 2, Position: 7.5}}
	ok := statusBody{State: "paused", FolderID: &folder, Index: 2, Position: 7.5, Volume: 30}
	if why := restoredAs(disk, ok, 30, 0, "local"); why != "" {
		t.Errorf("restored as on disk: %s", why)
	}
	if why := restoredAs(disk, statusBody{State: "paused", FolderID: &folder, Index: 2, Position: 7.5, Volume: 25}, 30, 25, "local"); why != "" {
		t.Errorf("under bedtime's night maximum: %s", why)
	}
	for name, st := range map[string]statusBody{
		"louder":      {State: "paused", FolderID: &folder, Index: 2, Position: 7.5, Volume: 60},
		"other track": {State: "paused", FolderID: &folder, Index: 1, Position: 7.5, Volume: 30},
		"playing":     {State: "playing", FolderID: &folder, Index: 2, Position: 7.5, Volume: 30},
		"nothing":     {State: "stopped", Index: -1, Volume: 30},
	} {
		if restoredAs(disk, st, 30, 0, "local") == "" {
			t.Errorf("%s: not noticed", name)
		}
	}
}

// The event stream's state is rebuilt from its events.
func TestApplyEvent(t *testing.T) {
	var cur statusBody
	var have bool
	at := time.Now()
	if _, ok := applyEvent(&cur, &have, sseEvent{name: "volume", data: `{"volume":40,"max_volume":80}`, at: at}); ok {
		t.Error("a view before the status")
	}
	v, ok := applyEvent(&cur, &have, sseEvent{name: "status", data: `{"state":"paused","folder_id":"a","index":1,"position":3,"volume":30,"max_volume":80}`, at: at})
	if !ok || v.folder != "a" || v.index != 1 || v.volume != 30 {
		t.Fatalf("status: %+v %v", v, ok)
	}
	v, _ = applyEvent(&cur, &have, sseEvent{name: "volume", data: `{"volume":40,"max_volume":80}`, at: at})
	if v.volume != 40 || v.folder != "a" {
		t.Errorf("after volume: %+v", v)
	}
	if _, ok := applyEvent(&cur, &have, sseEvent{name: "queue", data: `{"folder_id":"b"}`, at: at}); ok {
		t.Error("a view between queue and track")
	}
	v, _ = applyEvent(&cur, &have, sseEvent{name: "track", data: `{"index":0,"position":0}`, at: at})
	if v.folder != "b" || v.index != 0 {
		t.Errorf("after queue and track: %+v", v)
	}
	v, _ = applyEvent(&cur, &have, sseEvent{name: "queue", data: `{"folder_id":null}`, at: at})
	if v.folder != "" || v.index != -1 {
		t.Errorf("after the queue emptied: %+v", v)
	}
}

func TestEventStreamContract(t *testing.T) {
	e := &eventStream{}
	ev := func(name, id string) sseEvent {
		return sseEvent{name: name, id: id, hasID: id != "", data: "{}"}
	}
	if why := e.check(ev("status", "10"), true, 0); why != "" {
		t.Fatal(why)
	}
	if why := e.check(ev("volume", "11"), false, 0); why != "" {
		t.Error(why)
	}
	if why := e.check(ev("volume", "13"), false, 0); !strings.Contains(why, "13 after 11") {
		t.Errorf("a gap: %q", why)
	}
	if why := e.check(ev("volume", "14"), true, 0); !strings.Contains(why, "not status") {
		t.Errorf("a new stream without status: %q", why)
	}
	if why := e.check(ev("volume", "21"), true, 20); why != "" {
		t.Errorf("resumed: %q", why)
	}
	if why := e.check(ev("volume", "25"), true, 20); why == "" {
		t.Error("resumed with a gap: not noticed")
	}
	if why := e.check(ev("reset", ""), true, 20); why != "" || e.lastID != 0 {
		t.Errorf("reset: %q", why)
	}
	if why := e.check(sseEvent{name: "volume", id: "3", hasID: true, data: "{"}, false, 0); !strings.Contains(why, "not JSON") {
		t.Errorf("broken data: %q", why)
	}
}

func TestContainsAndDiff(t *testing.T) {
	got := asJSON(map[string]any{"audio": map[string]any{"max_volume": 80, "startup_volume": 30}, "language": "de"})
	if !contains(got, asJSON(map[string]any{"audio": map[string]any{"max_volume": 80}})) {
		t.Error("a field sent and present")
	}
	if contains(got, asJSON(map[string]any{"audio": map[string]any{"max_volume": 81}})) {
		t.Error("another value")
	}
	var out []string
	jsonDiff(asJSON(map[string]any{"a": 1, "b": map[string]any{"c": 2}}), asJSON(map[string]any{"a": 1, "b": map[string]any{"c": 3}, "d": true}), "x", &out)
	if strings.Join(out, "|") != "x.b.c: want 2, got 3|x.d: want nothing, got true" {
		t.Errorf("diff %q", out)
	}
}

func TestCheckBackup(t *testing.T) {
	archive := func(names ...string) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for _, n := range names {
			w, _ := zw.Create(n)
			_, _ = io.WriteString(w, "{}")
		}
		_ = zw.Close()
		return b.Bytes()
	}
	if why := checkBackup(archive("manifest.json", "settings.json", "state.json"), false); why != "" {
		t.Error(why)
	}
	if why := checkBackup(archive("manifest.json", "settings.json", "state.json"), true); why == "" {
		t.Error("media asked for, none there: not noticed")
	}
	if why := checkBackup(archive("settings.json", "state.json"), false); why == "" {
		t.Error("no manifest: not noticed")
	}
	if why := checkBackup([]byte("PK garbage"), false); why == "" {
		t.Error("not a ZIP: not noticed")
	}
}

// The chart is well-formed SVG with a line per series and the kills marked.
func TestChartIsSVG(t *testing.T) {
	bound := 100.0
	svg := chart{title: "t & <u>", yLabel: "ms", marks: []float64{1.5}, bound: &bound, lines: []line{
		{"a", "#000", [][2]float64{{0, 1}, {1, 2}, {2, math.NaN()}, {3, 4}}},
		{"b", "#111", [][2]float64{{0, 3}}},
	}}.svg()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	paths := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "path" {
			paths++
		}
	}
	if paths != 2 || !bytes.Contains(svg, []byte("M")) || bytes.Count(svg, []byte("stroke-dasharray")) != 2 {
		t.Errorf("%d paths:\n%s", paths, svg)
	}
}
