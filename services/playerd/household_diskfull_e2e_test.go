package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/household"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// TestHouseholdDiskFull fills the data partition (a real ENOSPC, as
// TestDiskFull does, in a mount namespace): a card taught is refused with
// an error and changes nothing, a conflict file that would need its winner
// written stays until there is room (the lists already follow the rule),
// no temporary file is left, and once there is room everything goes on.
func TestHouseholdDiskFull(t *testing.T) {
	onSmallDisk(t, "TestHouseholdDiskFull", householdDiskFull)
}

func householdDiskFull(t *testing.T, dir string) {
	data := filepath.Join(dir, "playerd")
	started := make(chan *box.Box, 1)
	base, _ := startBoxWith(t, mediaLibrary(t, map[string][]float64{"Folge A": {2}, "Folge B": {2}}), data, func(s *setup) {
		s.onStart = func(r *running) { started <- r.core }
	})
	core := <-started
	c := client(t, base)
	folderA, folderB := folderIDs(t, base)
	c.do("PUT", "/api/admin/cards/7", `{"action":"folder","folder_id":"`+folderA+`"}`).want(t, "teach 7", 200, "")
	cardsDir := filepath.Join(household.Dir(data), "cards")
	other := newOtherBox(t, time.Now().Add(time.Hour))
	other.put(household.Cards, "7", cards.Mapping{Action: cards.ActFolder, FolderID: folderB})
	conflict := filepath.Join(cardsDir, "7.sync-conflict-20261125-180000-FFFFFFF.json")
	writeFile(t, conflict, other.file(household.Cards, "7"))

	fill(t, filepath.Join(dir, "filler"))
	c.do("PUT", "/api/admin/cards/8", `{"action":"stop"}`).want(t, "teach on a full disk", 500, "")
	if _, err := core.Reconcile(); err == nil {
		t.Error("a reconcile that could not write its winner reported nothing")
	}
	if _, err := os.Stat(conflict); err != nil {
		t.Errorf("the conflict file went before its winner was written: %v", err)
	}
	got := c.do("GET", "/api/admin/cards", "").want(t, "cards", 200, "").body["cards"].(map[string]any)
	if _, ok := got["8"]; ok || len(got) != 1 || got["7"].(map[string]any)["folder_id"] != folderB {
		t.Errorf("cards on a full disk: %v", got)
	}
	entries, _ := os.ReadDir(cardsDir)
	for _, e := range entries {
		if state.IsTemp(e.Name()) {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}

	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	if rep, err := core.Reconcile(); err != nil || rep.Resolved != 1 {
		t.Errorf("reconcile with room again: %+v %v", rep, err)
	}
	if _, err := os.Stat(conflict); err == nil {
		t.Error("the conflict file is left")
	}
	c.do("PUT", "/api/admin/cards/8", `{"action":"stop"}`).want(t, "teach with room again", 200, "")
	got = c.do("GET", "/api/admin/cards", "").want(t, "cards", 200, "").body["cards"].(map[string]any)
	if len(got) != 2 || !strings.Contains(got["7"].(map[string]any)["folder_id"].(string), folderB) {
		t.Errorf("cards with room again: %v", got)
	}
}
