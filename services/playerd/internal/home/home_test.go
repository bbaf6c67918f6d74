package home

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

func folders() []library.Folder {
	mk := func(id, rel string, durations ...float64) library.Folder {
		f := library.Folder{ID: id, Name: filepath.Base(rel), Relative: rel}
		for i, d := range durations {
			f.Tracks = append(f.Tracks, library.Track{ID: id + string(rune('0'+i)), Title: "Folge " + string(rune('1'+i)), Duration: d})
		}
		return f
	}
	return []library.Folder{mk("a", "Hörspiele/Eins", 100, 100), mk("b", "Hörspiele/Zwei", 60), mk("c", "Musik/Lieder", 30)}
}

func TestDefaultsFromTopLevelFolders(t *testing.T) {
	h := Build(Defaults([]string{"Hörspiele", "Musik"}), folders(), nil, "de")
	if len(h.Categories) != 2 || h.Categories[0].ID != "hoerspiele" || h.Categories[1].ID != "musik" {
		t.Fatalf("categories %+v", h.Categories)
	}
	items := h.Categories[0].Rows[0].Items
	if len(items) != 2 || items[0].Subtitle != "2 Titel" || items[0].Command != (player.Command{Action: "folder", FolderID: "a"}) {
		t.Errorf("items %+v", items)
	}
}

func TestContinueRow(t *testing.T) {
	now := time.Now()
	resume := map[string]state.ResumePoint{
		"a": {Index: 1, Position: 50, UpdatedAt: now},
		"c": {Index: 0, Position: 10, UpdatedAt: now.Add(-time.Hour)},
		"x": {Index: 0, Position: 10, UpdatedAt: now}, // folder gone
	}
	h := Build(Defaults([]string{"Hörspiele", "Musik"}), folders(), resume, "en")
	cont := h.Categories[0]
	if cont.ID != "continue" {
		t.Fatalf("first category %q, want continue", cont.ID)
	}
	items := cont.Rows[0].Items
	if len(items) != 2 || items[0].ID != "resume-local-a" || items[1].ID != "resume-local-c" {
		t.Fatalf("resume items %+v", items)
	}
	if items[0].Subtitle != "Folge 2 · 75%" || items[0].Kind != "resume" {
		t.Errorf("subtitle %q", items[0].Subtitle)
	}
	if c := items[0].Command; c.Action != "resume" || c.FolderID != "a" || *c.ItemIndex != 1 {
		t.Errorf("command %+v", c)
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	if c, err := LoadConfig(dir); c != nil || err != nil {
		t.Errorf("no file: %v %v", c, err)
	}
	cfg := `{"categories":[{"id":"kids","labels":{"de":"Kinder"},"rows":[{"id":"r","provider":"local-library","source_ref":"Musik"},{"id":"c","provider":"resume-list","source_ref":"5"}]}]}`
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := Build(c, folders(), nil, "de")
	if len(h.Categories) != 1 || len(h.Categories[0].Rows) != 1 || h.Categories[0].Rows[0].Items[0].ID != "c" {
		t.Errorf("configured home %+v", h)
	}
	for _, bad := range []string{
		`{"categories":[{"id":"k","rows":[{"id":"r","provider":"spotify"}]}]}`,
		`{"categories":[{"id":"k","rows":[{"id":"r","provider":"local-library","source_ref":"../etc"}]}]}`,
		`{"categories":[{"id":"k","rows":[{"id":"r","provider":"resume-list","source_ref":"500"}]}]}`,
		`{"categories":[{"rows":[]}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if c, err := LoadConfig(dir); err == nil || c != nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
