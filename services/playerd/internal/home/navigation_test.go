package home

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
)

func navigation() *Config {
	return &Config{Version: Version, Categories: []CategoryConfig{
		{ID: "continue", Labels: Labels{"de": "Weiterhören"}, Rows: []RowConfig{{ID: "resume", Provider: ProviderResume, SourceRef: "5"}}},
		{ID: "stories", Labels: Labels{"de": "Geschichten", "en": "Stories"}, Rows: []RowConfig{
			{ID: "a", Provider: ProviderLibrary, SourceRef: "Hörspiele/Eins"},
			{ID: "b", Provider: ProviderLibrary, SourceRef: "Hörspiele"},
			{ID: "all", Provider: ProviderLibrary},
		}},
	}}
}

func TestNavigationValidateNamesTheField(t *testing.T) {
	if err := navigation().Validate(); err != nil {
		t.Fatal(err)
	}
	for want, mutate := range map[string]func(*Config){
		"version":                          func(c *Config) { c.Version = 3 },
		"categories[1].id":                 func(c *Config) { c.Categories[1].ID = "" },
		"categories[1].id \"continue\"":    func(c *Config) { c.Categories[1].ID = "continue" },
		"categories[1].rows[1].id \"a\"":   func(c *Config) { c.Categories[1].Rows[1].ID = "a" },
		"categories[0].rows[0].source_ref": func(c *Config) { c.Categories[0].Rows[0].SourceRef = "1000" },
		"categories[1].rows[2].provider":   func(c *Config) { c.Categories[1].Rows[2].Provider = "spotify" },
		"categories[1].labels":             func(c *Config) { c.Categories[1].Labels["x y"] = "z" },
		"categories[1].rows[0].source_ref": func(c *Config) { c.Categories[1].Rows[0].SourceRef = "../etc" },
	} {
		c := navigation()
		mutate(c)
		if err := c.Validate(); !errors.Is(err, fault.Invalid) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	for _, ref := range []string{"..", "a/../b", "/etc", "a//b", "a/", "./a", `a\b`, "a/./b", "a\x00b"} {
		c := navigation()
		c.Categories[1].Rows[0].SourceRef = ref
		if err := c.Validate(); err == nil {
			t.Errorf("source_ref %q accepted", ref)
		}
	}
}

func TestNavigationCheckFoldersAndRename(t *testing.T) {
	c := navigation()
	exists := map[string]bool{"Hörspiele": true, "Hörspiele/Eins": true}
	if err := c.CheckFolders(func(rel string) bool { return exists[rel] }); err != nil {
		t.Fatal(err)
	}
	delete(exists, "Hörspiele/Eins")
	if err := c.CheckFolders(func(rel string) bool { return exists[rel] }); err == nil || !strings.Contains(err.Error(), "rows[0].source_ref") {
		t.Errorf("missing folder: %v", err)
	}
	if !c.Renamed("Hörspiele", "Geschichten") {
		t.Fatal("no row followed the rename")
	}
	rows := c.Categories[1].Rows
	if rows[0].SourceRef != "Geschichten/Eins" || rows[1].SourceRef != "Geschichten" || rows[2].SourceRef != "" {
		t.Errorf("after rename: %+v", rows)
	}
	if c.Renamed("Hör", "x") {
		t.Error("a prefix that is not a whole folder name matched")
	}
}

func TestNavigationSaveParseLoad(t *testing.T) {
	dir := t.TempDir()
	c := navigation()
	if err := Save(dir, c); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data)
	if err != nil || !reflect.DeepEqual(p, c) {
		t.Errorf("parse: %+v %v", p, err)
	}
	l, err := LoadConfig(dir)
	if err != nil || !reflect.DeepEqual(l, c) {
		t.Errorf("load: %+v %v", l, err)
	}
	if !reflect.DeepEqual(c.Clone(), c) {
		t.Error("clone differs")
	}
	bad := *c
	bad.Version = 0
	if err := Save(dir, &bad); err == nil {
		t.Error("an invalid document was saved")
	}
	for _, doc := range []string{`{"categories":[],"extra":1}`, `{"categories":[]} x`, `{"categories":[{"id":""}]}`} {
		if _, err := Parse([]byte(doc)); !errors.Is(err, fault.Invalid) {
			t.Errorf("%s: %v", doc, err)
		}
	}
}
