package cards

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/household"
)

// shared is a store over dir shared through a household store of box id.
func shared(t *testing.T, dir, id string, changed func()) (*Store, *household.Store) {
	t.Helper()
	h, err := household.Open(dir, id, func() time.Time { return time.Date(2026, 11, 28, 21, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir, changed)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Share(h, false); err != nil {
		t.Fatal(err)
	}
	return s, h
}

func localDoc(t *testing.T, dir string) Doc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A box that kept its mappings in cards.json moves them into the shared
// folder on its first start and loses none; cards.json keeps its own
// settings.
func TestMigrationFromCardsJSON(t *testing.T) {
	dir := t.TempDir()
	old := Defaults()
	old.SameCard, old.Sounds = SameCardTogglePause, false
	old.Cards = map[string]Mapping{
		"1":  {Action: ActFolder, FolderID: "f1", Name: "Bobo"},
		"2A": {Action: ActSleepTimer, Value: num(20)},
		"3":  {Action: ActStop},
	}
	data, _ := Encode(old)
	if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, h := shared(t, dir, "box-a", nil)
	if got := s.Get(); !reflect.DeepEqual(got, old) {
		t.Errorf("after the move: %+v, want %+v", got, old)
	}
	items, err := h.List(household.Cards)
	if err != nil || len(items) != 3 {
		t.Fatalf("shared: %v %v", items, err)
	}
	if l := localDoc(t, dir); len(l.Cards) != 0 || l.SameCard != SameCardTogglePause || l.Sounds {
		t.Errorf("cards.json after the move: %+v", l)
	}
	// A second start finds them where they are now.
	s2, _ := shared(t, dir, "box-a", nil)
	if got := s2.Get(); !reflect.DeepEqual(got, old) {
		t.Errorf("second start: %+v", got)
	}
	// The backup is the whole document, as before.
	b, err := s2.Read()
	if err != nil {
		t.Fatal(err)
	}
	if d, err := Parse(b); err != nil || !reflect.DeepEqual(d, old) {
		t.Errorf("backup: %+v %v", d, err)
	}
}

// A crash after the move but before cards.json was rewritten leaves a
// card in both places; another box's newer change of it is not undone.
func TestMigrationKeepsNewerSharedVersions(t *testing.T) {
	dir := t.TempDir()
	old := Defaults()
	old.Cards = map[string]Mapping{"1": {Action: ActStop}, "2": {Action: ActPause}}
	data, _ := Encode(old)
	os.WriteFile(filepath.Join(dir, FileName), data, 0o644)
	h, err := household.Open(dir, "box-b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Put(household.Cards, "1", Mapping{Action: ActNext}); err != nil {
		t.Fatal(err)
	}
	s, _ := shared(t, dir, "box-a", nil)
	if got := s.Get().Cards; got["1"].Action != ActNext || got["2"].Action != ActPause {
		t.Errorf("%+v", got)
	}
}

// Changes go to one file per card; deletions leave a tombstone.
func TestSharedChangesAreEntries(t *testing.T) {
	dir := t.TempDir()
	var told atomic.Int32
	s, h := shared(t, dir, "box-a", func() { told.Add(1) })
	svc, err := New(Options{Store: s, Player: &fakePlayer{}, Catalog: catalog{"f1": true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Put("1", Mapping{Action: ActFolder, FolderID: "f1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Put("2", Mapping{Action: ActStop}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete("2"); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := h.Get(household.Cards, "2"); err != nil || !ok || !e.Deleted {
		t.Errorf("tombstone: %+v %v %v", e, ok, err)
	}
	e, ok, err := h.Get(household.Cards, "1")
	var m Mapping
	if err != nil || !ok || json.Unmarshal(e.Value, &m) != nil || m.FolderID != "f1" || e.Box != "box-a" {
		t.Errorf("entry: %+v %v %v", e, ok, err)
	}
	if l := localDoc(t, dir); len(l.Cards) != 0 {
		t.Errorf("cards.json holds mappings: %+v", l)
	}
	if told.Load() != 3 {
		t.Errorf("told %d times", told.Load())
	}
	if err := svc.Replace(Doc{Version: Version, SameCard: SameCardContinue, Sounds: true,
		Cards: map[string]Mapping{"3": {Action: ActPause}}}); err != nil {
		t.Fatal(err)
	}
	items, _ := h.List(household.Cards)
	if len(items) != 1 || items[0].ID != "3" {
		t.Errorf("after replace: %+v", items)
	}
}

// A card another box taught appears on ReloadShared, which tells the feed
// only when something changed.
func TestReloadSharedSeesAnotherBoxsCard(t *testing.T) {
	dir := t.TempDir()
	var told atomic.Int32
	s, _ := shared(t, dir, "box-a", func() { told.Add(1) })
	other, err := household.Open(dir, "box-b", nil) // the files Syncthing brings
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Put(household.Cards, "9", Mapping{Action: ActToggle}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Put(household.Cards, "BAD", Mapping{Action: "fly"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReloadShared(); err == nil {
		t.Error("a mapping this box cannot use is not reported")
	}
	if got := s.Get().Cards; len(got) != 1 || got["9"].Action != ActToggle {
		t.Errorf("%+v", got)
	}
	_ = s.ReloadShared()
	if told.Load() != 1 {
		t.Errorf("told %d times", told.Load())
	}
}

// A restore replaces the household's mappings with the backup's.
func TestRestoreReplacesSharedMappings(t *testing.T) {
	dir := t.TempDir()
	s, h := shared(t, dir, "box-a", nil)
	if err := s.Update(func(d *Doc) error { d.Cards["1"] = Mapping{Action: ActStop}; return nil }); err != nil {
		t.Fatal(err)
	}
	backup := Defaults()
	backup.Cards = map[string]Mapping{"2": {Action: ActPause}}
	data, _ := Encode(backup)
	if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := s.Get(); !reflect.DeepEqual(got, backup) {
		t.Errorf("%+v", got)
	}
	items, _ := h.List(household.Cards)
	if len(items) != 1 || items[0].ID != "2" {
		t.Errorf("shared after restore: %+v", items)
	}
	if l := localDoc(t, dir); len(l.Cards) != 0 {
		t.Errorf("cards.json holds mappings: %+v", l)
	}
}

// A card read here unknown and then taught on another box is no longer
// among the unknown cards once its mapping arrives.
func TestCardTaughtElsewhereLeavesTheUnknownList(t *testing.T) {
	dir := t.TempDir()
	s, _ := shared(t, dir, "box-a", nil)
	svc, err := New(Options{Store: s, Player: &fakePlayer{}, Catalog: catalog{"f1": true}, UnknownFile: filepath.Join(dir, UnknownFileName)})
	if err != nil {
		t.Fatal(err)
	}
	svc.Card(context.Background(), "55", "reader")
	if u := svc.Unknown(); len(u) != 1 {
		t.Fatalf("unknown: %+v", u)
	}
	other, err := household.Open(dir, "box-b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Put(household.Cards, "55", Mapping{Action: ActFolder, FolderID: "f1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReloadShared(); err != nil {
		t.Fatal(err)
	}
	if u := svc.Unknown(); len(u) != 0 {
		t.Errorf("still unknown: %+v", u)
	}
}
