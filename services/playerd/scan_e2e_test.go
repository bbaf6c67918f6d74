package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// scanStatus is the status's library object.
type scanStatus struct {
	Scanning    bool `json:"scanning"`
	Done, Total int
}

func statusScan(t *testing.T, base string) scanStatus {
	t.Helper()
	resp, err := http.Get(base + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Library *scanStatus `json:"library"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 || st.Library == nil {
		t.Fatalf("GET /api/status: %d, library %+v, %v", resp.StatusCode, st.Library, err)
	}
	return *st.Library
}

// linkedLibrary is folders of 20 tracks, hard links of the MP3 and FLAC
// fixtures (four MP3 folders to one FLAC): a large library made in moments.
func linkedLibrary(t *testing.T, folders int) string {
	t.Helper()
	media := t.TempDir()
	for f := range folders {
		dir := filepath.Join(media, fmt.Sprintf("Serie %d", f/50), fmt.Sprintf("Folge %d", f))
		must(t, os.MkdirAll(dir, 0o755))
		src, ext := "internal/decode/testdata/tone.mp3", "mp3"
		if f%5 == 4 {
			src, ext = "internal/decode/testdata/tone.flac", "flac"
		}
		src, err := filepath.Abs(src)
		must(t, err)
		for i := range 20 {
			must(t, os.Link(src, filepath.Join(dir, fmt.Sprintf("Kapitel %d.%s", i, ext))))
		}
	}
	return media
}

// A box whose large library was never scanned answers at once: health,
// status with the scan's progress, the library (empty until the scan is
// done), while the scan runs; the scan's progress is on the event feed,
// and the library is complete when it ends. The scan's reads are held
// until the test has looked, so what is asserted is a running scan, not a
// fast machine.
func TestServesWhileTheFirstScanRuns(t *testing.T) {
	const tracks = 2000
	media := linkedLibrary(t, tracks/20)
	hold := make(chan struct{})
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) { c.holdScan = hold })
	defer stop()
	defer release()
	// From the box's first event on: the scan started before the stream.
	events := openStream(t, base, "0")

	resp, err := http.Get(base + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /api/health: %d", resp.StatusCode)
	}
	// The walk finds every file; their reads wait.
	var p scanStatus
	waitUntil(t, "the scan to find every file", 60*time.Second, func() bool {
		p = statusScan(t, base)
		return p.Total == tracks
	})
	if !p.Scanning || p.Done != 0 {
		t.Errorf("status while the scan is held: %+v, want scanning, nothing done", p)
	}
	if lib := getJSON[[]any](t, base+"/api/library"); len(lib) != 0 {
		t.Errorf("%d folders listed before the first scan is done", len(lib))
	}
	if info := getJSON[struct {
		Library struct{ Scanned bool } `json:"library"`
	}](t, base+"/api/info"); info.Library.Scanned {
		t.Error("/api/info: scanned before the scan is done")
	}

	// The feed tells the same, the held scan's last state included.
	events.until(t, "a scan event of the held scan", func(ev sseEvent) bool {
		var s scanStatus
		return ev.Event == "scan" && json.Unmarshal([]byte(ev.Data), &s) == nil && s == scanStatus{Scanning: true, Total: tracks}
	})

	release()
	// The end of the scan and the new library are told apart, in either
	// order.
	var last scanStatus
	library := false
	events.until(t, "the scan's end and the library event", func(ev sseEvent) bool {
		switch ev.Event {
		case "scan":
			if err := json.Unmarshal([]byte(ev.Data), &last); err != nil {
				t.Fatalf("scan event %s: %v", ev.Data, err)
			}
		case "library":
			library = true
		}
		return library && !last.Scanning && last.Total > 0
	})
	if last != (scanStatus{Done: tracks, Total: tracks}) {
		t.Errorf("the last scan event: %+v; want the end with all %d done", last, tracks)
	}
	if p := statusScan(t, base); p != (scanStatus{Done: tracks, Total: tracks}) {
		t.Errorf("status after the scan: %+v", p)
	}
	waitScanned(t, base)
	lib := getJSON[[]struct {
		Tracks []struct {
			Duration float64 `json:"duration"`
		} `json:"tracks"`
	}](t, base+"/api/library")
	n := 0
	for _, f := range lib {
		for _, tr := range f.Tracks {
			n++
			if tr.Duration < 2 || tr.Duration > 2.1 {
				t.Fatalf("a track of %v s; the fixtures play 2 s", tr.Duration)
			}
		}
	}
	if len(lib) != tracks/20 || n != tracks {
		t.Errorf("library after the scan: %d folders, %d tracks; want %d, %d", len(lib), n, tracks/20, tracks)
	}
}

// A library scan that fails at start (no media directory yet) is repeated
// until it succeeds, without a restart.
func TestScanRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the first retry (1 s)")
	}
	media := t.TempDir() + "/media" // not there yet
	base, _ := startBoxWith(t, media, t.TempDir(), func(c *setup) { c.scanning = true })
	info := getJSON[map[string]any](t, base+"/api/info")
	if lib := jsonObj(info["library"]); lib["scanned"] != false {
		t.Fatalf("library before the media directory exists: %v", lib)
	}
	// The directory appears at once, as a card that is mounted late would.
	if err := os.Rename(mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {2, 2}}), media); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the library", 20*time.Second, func() bool {
		return len(getJSON[[]map[string]any](t, base+"/api/library")) == 1
	})
}
