package radio

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/household"
)

func shareService(t *testing.T, dir, box string, changes *atomic.Int32) (*Service, *household.Store) {
	t.Helper()
	h, err := household.Open(dir, box, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newService(t, dir, changes)
	if err := s.Share(h, false); err != nil {
		t.Fatal(err)
	}
	return s, h
}

// A box that kept its stations in radio.json moves them to the household
// on its first start, in their order; radio.json is left empty, and the
// backup still holds them.
func TestMigrationFromRadioJSON(t *testing.T) {
	dir := t.TempDir()
	old := newService(t, dir, nil)
	var want []Station
	for _, n := range []string{"Zebra", "Alpha", "Mitte"} {
		st, err := old.AddStation(Station{Name: n, URL: "https://radio.example/" + n})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, st)
	}
	s, h := shareService(t, dir, "box-a", nil)
	got := s.Stations()
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("after the move: %+v", got)
	}
	if items, _ := h.List(household.Stations); len(items) != 3 {
		t.Errorf("shared: %d", len(items))
	}
	if c, err := Parse(mustRead(t, filepath.Join(dir, FileName)), testPolicy); err != nil || len(c.Stations) != 0 {
		t.Errorf("radio.json after the move: %+v %v", c, err)
	}
	b, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if c, err := Parse(b, testPolicy); err != nil || len(c.Stations) != 3 || c.Stations[0] != want[0] {
		t.Errorf("backup: %+v %v", c, err)
	}
	again, _ := shareService(t, dir, "box-a", nil)
	if len(again.Stations()) != 3 {
		t.Errorf("second start: %+v", again.Stations())
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Changes are entries; a station another box added appears on
// ReloadShared, which tells of it once.
func TestSharedStations(t *testing.T) {
	dir := t.TempDir()
	var changes atomic.Int32
	s, h := shareService(t, dir, "box-a", &changes)
	st, err := s.AddStation(Station{Name: "Kinderfunk", URL: "https://radio.example/kids.mp3"})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok, err := h.Get(household.Stations, st.ID); err != nil || !ok || e.Deleted {
		t.Fatalf("entry: %+v %v %v", e, ok, err)
	}
	if _, err := s.UpdateStation(st.ID, Station{Name: "Nacht", URL: st.URL}); err != nil {
		t.Fatal(err)
	}
	other, err := household.Open(dir, "box-b", nil)
	if err != nil {
		t.Fatal(err)
	}
	theirs := Station{ID: newID(), Name: "Von B", URL: "https://radio.example/b.mp3"}
	if _, err := other.Put(household.Stations, theirs.ID, theirs); err != nil {
		t.Fatal(err)
	}
	before := changes.Load()
	if err := s.ReloadShared(); err != nil {
		t.Fatal(err)
	}
	if err := s.ReloadShared(); err != nil {
		t.Fatal(err)
	}
	if changes.Load() != before+1 {
		t.Errorf("told %d times", changes.Load()-before)
	}
	if f, ok := s.Folder(theirs.ID); !ok || f.Name != "Von B" {
		t.Errorf("another box's station: %+v %v", f, ok)
	}
	if got := s.Stations(); len(got) != 2 || got[0].Name != "Nacht" || got[1] != theirs {
		t.Errorf("stations %+v", got)
	}
	if err := s.DeleteStation(theirs.ID); err != nil {
		t.Fatal(err)
	}
	if e, _, _ := other.Get(household.Stations, theirs.ID); !e.Deleted {
		t.Error("no tombstone")
	}
	// An entry that fails the checks is left out and reported.
	bad := Station{ID: newID(), Name: "", URL: "ftp://x"}
	if _, err := other.Put(household.Stations, bad.ID, bad); err != nil {
		t.Fatal(err)
	}
	if err := s.ReloadShared(); err == nil {
		t.Error("a bad entry is not reported")
	}
	if len(s.Stations()) != 1 {
		t.Errorf("stations %+v", s.Stations())
	}
	// It is no failure of a parent's change here.
	if _, err := s.AddStation(Station{Name: "Noch eine", URL: "https://radio.example/c.mp3"}); err != nil {
		t.Errorf("a change beside an unusable entry: %v", err)
	}
	if len(s.Stations()) != 2 {
		t.Errorf("stations %+v", s.Stations())
	}
}

// A restore replaces the household's entries with the backup's.
func TestRestoreReplacesSharedStations(t *testing.T) {
	dir := t.TempDir()
	s, h := shareService(t, dir, "box-a", nil)
	if _, err := s.AddStation(Station{Name: "Weg", URL: "https://radio.example/a.mp3"}); err != nil {
		t.Fatal(err)
	}
	keep := Station{ID: newID(), Name: "Aus dem Backup", URL: "https://radio.example/b.mp3"}
	data := []byte(`{"version":1,"stations":[{"id":"` + keep.ID + `","name":"Aus dem Backup","url":"https://radio.example/b.mp3"}],"podcasts":[]}`)
	if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := s.Stations(); len(got) != 1 || got[0] != keep {
		t.Errorf("%+v", got)
	}
	if items, _ := h.List(household.Stations); len(items) != 1 || items[0].ID != keep.ID {
		t.Errorf("shared %+v", items)
	}
}
