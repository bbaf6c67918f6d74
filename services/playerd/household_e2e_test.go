package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/household"
	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
	"github.com/storybox/storybox/services/playerd/internal/radio"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// otherBox writes the household's entries as another box would, into its
// own data directory; syncIn then brings a file over as Syncthing does.
type otherBox struct {
	t    *testing.T
	data string
	s    *household.Store
}

func newOtherBox(t *testing.T, at time.Time) *otherBox {
	o := &otherBox{t: t, data: t.TempDir()}
	s, err := household.Open(o.data, "ffffffff-other-box", func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	o.s = s
	return o
}

func (o *otherBox) put(k household.Kind, id string, v any) {
	if _, err := o.s.Put(k, id, v); err != nil {
		o.t.Fatal(err)
	}
}

func (o *otherBox) file(k household.Kind, id string) []byte {
	data, err := os.ReadFile(filepath.Join(household.Dir(o.data), string(k), id+".json"))
	if err != nil {
		o.t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitEvent waits for an event of kind whose payload JSON contains want.
func waitEvent(t *testing.T, sub *events.Subscription, kind events.Kind, want string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		ready := sub.Ready()
		ev, err := sub.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev == nil {
			select {
			case <-ready:
				continue
			case <-timeout:
				t.Fatalf("no %s event with %s", kind, want)
			}
		}
		if ev.Kind == kind && strings.Contains(string(ev.Data), want) {
			return
		}
	}
}

// Syncthing, simulated: another box's card, station and track arrive in
// this box's folders under Syncthing's temporary names and are renamed
// into place, a card changed on both boxes arrives as a conflict file, and
// a folder deleted on the other box goes while it plays here. Nothing
// partial is listed; the card plays, the station appears, the conflicts
// (of a card, of tracks) are resolved and their files are gone, and the
// deleted folder stops the player as a local deletion does.
func TestHouseholdSyncedByFiles(t *testing.T) {
	media, data := mediaLibrary(t, map[string][]float64{"Folge A": {30, 30}, "Folge B": {30}}), t.TempDir()
	started := make(chan *box.Box, 1)
	b := startCardBox(t, media, data, func(s *setup) {
		s.onStart = func(r *running) { started <- r.core }
	})
	core := <-started
	folderA, folderB := folderIDs(t, b.base)
	b.devs.Plug(readerPath, inputtest.Reader)
	b.waitDevices(1)
	sub := core.Changes().Subscribe()
	defer sub.Close()
	shared := core.HouseholdDir()
	if shared != household.Dir(data) {
		t.Fatalf("household dir %q", shared)
	}
	reconcile := func() household.Report {
		t.Helper()
		rep, err := core.Reconcile()
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	// The other box's clock is a day ahead of this one's: its edits win.
	other := newOtherBox(t, time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC))

	// A card taught on the other box, still arriving: not known here.
	other.put(household.Cards, "42", cards.Mapping{Action: cards.ActFolder, FolderID: folderA})
	tmp := filepath.Join(shared, "cards", ".syncthing.42.json.tmp")
	writeFile(t, tmp, other.file(household.Cards, "42")[:40])
	reconcile()
	if _, ok := b.do("GET", "/api/admin/cards", "").want(t, "cards", 200, "").body["cards"].(map[string]any)["42"]; ok {
		t.Fatal("a card still arriving is known")
	}
	// Complete and renamed into place: told on the feed, and it plays.
	writeFile(t, tmp, other.file(household.Cards, "42"))
	if err := os.Rename(tmp, filepath.Join(shared, "cards", "42.json")); err != nil {
		t.Fatal(err)
	}
	reconcile()
	waitEvent(t, sub, events.KindSettings, box.SectionCards)
	if r := b.place("42"); r["outcome"] != cards.OutStarted || r["folder_id"] != folderA {
		t.Fatalf("the other box's card: %v", r)
	}

	// The same card taught on both boxes while apart: Syncthing keeps this
	// box's version under the name and the other's as a conflict file.
	b.do("PUT", "/api/admin/cards/7", `{"action":"folder","folder_id":"`+folderA+`"}`).want(t, "teach 7", 200, "")
	other.put(household.Cards, "7", cards.Mapping{Action: cards.ActFolder, FolderID: folderB, Name: "from the other box"})
	conflictName := "7.sync-conflict-20261125-180000-FFFFFFF.json"
	writeFile(t, filepath.Join(shared, "cards", conflictName), other.file(household.Cards, "7"))
	if rep := reconcile(); rep.Resolved != 1 || rep.Rewritten != 1 {
		t.Errorf("reconcile: %+v", rep)
	}
	names, _ := os.ReadDir(filepath.Join(shared, "cards"))
	for _, n := range names {
		if _, ok := household.ConflictOf(n.Name()); ok {
			t.Errorf("conflict file left: %s", n.Name())
		}
	}
	if got, _ := os.ReadFile(filepath.Join(shared, "cards", "7.json")); string(got) != string(other.file(household.Cards, "7")) {
		t.Errorf("7.json is not the winner's file byte for byte:\n%s", got)
	}
	if r := b.place("7"); r["outcome"] != cards.OutStarted || r["folder_id"] != folderB {
		t.Fatalf("the converged card: %v", r)
	}

	// A station added on the other box appears in the library.
	st := radio.Station{ID: "0123456789abcdef0123456789abcdef", Name: "Kinderfunk", URL: "https://radio.example/kids.mp3"}
	other.put(household.Stations, st.ID, st)
	writeFile(t, filepath.Join(shared, "stations", "~syncthing~"+st.ID+".json.tmp"), []byte(`{"version":1,`))
	reconcile()
	stations := func() []any {
		return b.do("GET", "/api/admin/stations", "").want(t, "stations", 200, "").body["stations"].([]any)
	}
	if got := stations(); len(got) != 0 {
		t.Fatalf("a partial station is listed: %v", got)
	}
	writeFile(t, filepath.Join(shared, "stations", st.ID+".json"), other.file(household.Stations, st.ID))
	reconcile()
	waitEvent(t, sub, events.KindCatalog, events.CatalogRadio)
	if got := stations(); len(got) != 1 || got[0].(map[string]any)["name"] != "Kinderfunk" {
		t.Fatalf("stations: %v", got)
	}
	lib := getJSON[[]map[string]any](t, b.base+"/api/library")
	if !slices.ContainsFunc(lib, func(f map[string]any) bool { return f["id"] == st.ID && f["kind"] == "radio" }) {
		t.Errorf("the station is not in the library: %v", lib)
	}

	// A track arriving in a new folder is not listed until it is renamed
	// into place, complete.
	ctx := context.Background()
	track := testmedia.Tone(1, 44100, 440)
	partial := filepath.Join(media, "Folge C", ".syncthing.01 Anfang.wav.tmp")
	writeFile(t, partial, track[:len(track)/2])
	writeFile(t, filepath.Join(media, "Folge C", "~syncthing~02 Ende.wav.tmp"), track[:100])
	if err := core.MediaSynced(ctx); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(getJSON[[]map[string]any](t, b.base+"/api/library"), func(f map[string]any) bool { return f["name"] == "Folge C" }) {
		t.Fatal("a folder of files still arriving is listed")
	}
	writeFile(t, partial, track)
	if err := os.Rename(partial, filepath.Join(media, "Folge C", "01 Anfang.wav")); err != nil {
		t.Fatal(err)
	}
	// A track replaced on two boxes at once: Syncthing keeps the older
	// version as a conflict file, which goes; one whose original is gone
	// takes its name.
	mediaConflict := filepath.Join(media, "Folge A", "Folge 1.sync-conflict-20261125-180000-FFFFFFF.wav")
	writeFile(t, mediaConflict, track)
	writeFile(t, filepath.Join(media, "Folge C", "02 Ende.sync-conflict-20261125-180000-FFFFFFF.wav"), track)
	if err := core.MediaSynced(ctx); err != nil {
		t.Fatal(err)
	}
	if err := core.MediaSynced(ctx); err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	for _, f := range getJSON[[]map[string]any](t, b.base+"/api/library") {
		if f["name"] == "Folge C" {
			c = f
		}
	}
	if c == nil || len(c["tracks"].([]any)) != 2 {
		t.Fatalf("Folge C after the rename: %v", c)
	}
	if _, err := os.Stat(mediaConflict); err == nil {
		t.Error("the media conflict file is left")
	}
	if _, err := os.Stat(filepath.Join(media, "Folge C", "02 Ende.wav")); err != nil {
		t.Errorf("the lone conflict file did not take its original's name: %v", err)
	}
	for _, f := range getJSON[[]map[string]any](t, b.base+"/api/library") {
		if f["id"] == folderA && len(f["tracks"].([]any)) != 2 {
			t.Errorf("Folge A: %v", f["tracks"])
		}
	}

	// Folge B plays (card 7) and is deleted on the other box: the player
	// stops as it does for a local deletion, and its resume point goes.
	waitStatus(t, b.c, "Folge B playing", func(s map[string]any) bool { return s["folder_id"] == folderB && s["state"] == "playing" })
	if err := os.RemoveAll(filepath.Join(media, "Folge B")); err != nil {
		t.Fatal(err)
	}
	if err := core.MediaSynced(ctx); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, b.c, "stopped", func(s map[string]any) bool { return s["state"] == "stopped" && s["folder_id"] == nil })
	if _, ok := core.Resume()[folderB]; ok {
		t.Error("the deleted folder's resume point is kept")
	}
	if r := b.place("7"); r["outcome"] != cards.OutFailed && r["outcome"] != cards.OutRefused {
		t.Errorf("the card of the deleted folder: %v", r)
	}

	// The card mappings are in the shared folder, not in cards.json.
	var local cards.Doc
	raw, _ := os.ReadFile(filepath.Join(data, cards.FileName))
	if err := json.Unmarshal(raw, &local); err != nil || len(local.Cards) != 0 {
		t.Errorf("cards.json: %s %v", raw, err)
	}
}
