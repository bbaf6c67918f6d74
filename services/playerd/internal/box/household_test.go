package box

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/household"
	"github.com/storybox/storybox/services/playerd/internal/radio"
	"github.com/storybox/storybox/services/playerd/internal/settings"
)

// A restore that a crash interrupted is completed at the next start; its
// card mappings and stations then replace the household's, as a restore that ran to its
// end does, instead of being taken for an old box's file to move (which
// would keep the household's versions).
func TestInterruptedRestoreReplacesTheHouseholdsCards(t *testing.T) {
	data := t.TempDir()
	id, err := settings.BoxID(data)
	if err != nil {
		t.Fatal(err)
	}
	h, err := household.Open(data, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Put(household.Cards, "1", cards.Mapping{Action: cards.ActStop}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Put(household.Cards, "2", cards.Mapping{Action: cards.ActStop}); err != nil {
		t.Fatal(err)
	}
	backup := cards.Defaults()
	backup.Cards = map[string]cards.Mapping{"1": {Action: cards.ActPause}}
	doc, _ := cards.Encode(backup)
	if err := os.WriteFile(filepath.Join(data, ".restore-cards.json-1"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	old := radio.Station{ID: "00000000000000000000000000000001", Name: "Alt", URL: "https://radio.example/alt.mp3"}
	if _, err := h.Put(household.Stations, old.ID, old); err != nil {
		t.Fatal(err)
	}
	restoredRadio := `{"version":1,"stations":[{"id":"00000000000000000000000000000002","name":"Neu","url":"https://radio.example/neu.mp3"}],"podcasts":[]}`
	if err := os.WriteFile(filepath.Join(data, ".restore-radio.json-1"), []byte(restoredRadio), 0o644); err != nil {
		t.Fatal(err)
	}
	journal := `{"ops":[{"name":"cards.json","temp":".restore-cards.json-1"},{"name":"radio.json","temp":".restore-radio.json-1"}]}`
	if err := os.WriteFile(filepath.Join(data, "restore-journal.json"), []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newTestBox(t, func(c *Config) { c.Data = data })
	got := b.cardStore.Get().Cards
	if len(got) != 1 || got["1"].Action != cards.ActPause {
		t.Errorf("after the completed restore: %+v", got)
	}
	if e, _, _ := h.Get(household.Cards, "2"); !e.Deleted {
		t.Error("a card the backup does not have is still shared")
	}
	if st := b.radio.Stations(); len(st) != 1 || st[0].Name != "Neu" {
		t.Errorf("stations after the completed restore: %+v", st)
	}
	if e, _, _ := h.Get(household.Stations, old.ID); !e.Deleted {
		t.Error("a station the backup does not have is still shared")
	}
}
