package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// When the state cannot be written, GET /api/info says why and since when,
// without paths; once writing works again (the retry), save_error is null
// and the change is on disk.
func TestInfoShowsWhySavingFails(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"A": {1}}); err != nil {
		t.Fatal(err)
	}
	// A directory where state.json belongs: every rename onto it fails.
	blocker := filepath.Join(data, state.FileName)
	if err := os.Mkdir(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	base, stop := startBox(t, media, data)
	defer stop()
	if st := getJSON[map[string]any](t, base+"/api/info")["storage"].(map[string]any); st["ok"] != true || st["error"] != nil {
		t.Fatalf("storage before any write: %v", st)
	}
	post(t, base, `{"action":"volume","value":17}`)

	failing := func(want bool) map[string]any {
		var st map[string]any
		// The retry comes after 5 s.
		waitUntil(t, "the storage state", 20*time.Second, func() bool {
			st, _ = getJSON[map[string]any](t, base+"/api/info")["storage"].(map[string]any)
			return (st["ok"] == false) == want
		})
		return st
	}
	se := failing(true)
	msg, _ := se["error"].(string)
	if !strings.HasPrefix(msg, "cannot save the player state") || strings.Contains(msg, data) {
		t.Errorf("message %q: must name the failure and no path", msg)
	}
	if since, err := time.Parse(time.RFC3339, se["since"].(string)); err != nil || time.Since(since) > time.Minute {
		t.Errorf("since %v: %v", se["since"], err)
	}

	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	failing(false)
	if s, err := state.Load(data); err != nil || s.Volume != 17 {
		t.Errorf("after recovery: volume %d %v, want 17", s.Volume, err)
	}
}
