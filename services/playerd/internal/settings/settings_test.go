package settings

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	s, err := Load(dir)
	if err != nil || s != Defaults() {
		t.Errorf("no file: %+v %v", s, err)
	}
	write := func(content string) {
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"audio":{"max_volume":50}}`)
	if s, err := Load(dir); err != nil || s.Audio.MaxVolume != 50 || s.Audio.StartupVolume != 30 || s.Language != "de" {
		t.Errorf("partial file: %+v %v", s, err)
	}
	for _, bad := range []string{
		`{"audio":{"max_volume":150}}`,
		`{"audio":{"max_volume":20,"startup_volume":30}}`,
		`{"language":""}`,
		`{"audio":{"max_volume":"x"}}`,
		`{`,
	} {
		write(bad)
		if s, err := Load(dir); err == nil || s != Defaults() {
			t.Errorf("%s: %+v %v, want defaults and an error", bad, s, err)
		}
	}
}

func TestBoxIDIsPersistent(t *testing.T) {
	dir := t.TempDir()
	a, err := BoxID(dir)
	if err != nil || len(a) != 36 {
		t.Fatalf("%q %v", a, err)
	}
	if b, _ := BoxID(dir); b != a {
		t.Errorf("box id changed: %s -> %s", a, b)
	}
	if err := os.WriteFile(filepath.Join(dir, "box_id"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := BoxID(dir); c == a || len(c) != 36 {
		t.Errorf("a corrupt id must be replaced by a new UUID, got %q", c)
	}
}
