package state

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteReadAndNoTornFiles(t *testing.T) {
	dir := t.TempDir()
	want := Saved{Volume: 25, Queue: &Queue{FolderID: "f", Index: 2, Position: 12.5},
		Resume: map[string]ResumePoint{"f": {Index: 2, TrackID: "t", Position: 12.5, UpdatedAt: time.Unix(100, 0).UTC()}}}
	if err := WriteJSON(filepath.Join(dir, FileName), want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil || got.Volume != 25 || got.Queue.Position != 12.5 || got.Resume["f"].TrackID != "t" {
		t.Fatalf("load: %+v %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestMissingAndCorruptState(t *testing.T) {
	dir := t.TempDir()
	s, err := Load(dir)
	if err != nil || s.Volume != 0 || s.Resume == nil {
		t.Errorf("missing file: %+v %v", s, err)
	}
	for _, junk := range []string{"{", `{"volume":"loud"}`, "\x00\x01", `[1,2]`} {
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(junk), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(dir)
		if !errors.Is(err, ErrCorrupt) || s.Volume != 0 || s.Queue != nil || s.Resume == nil {
			t.Errorf("%q: %+v %v, want defaults and ErrCorrupt", junk, s, err)
		}
	}
}

// A half-decodable file must not leave the destination half filled.
func TestReadJSONLeavesTargetAloneOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(path, []byte(`{"volume":40,"queue":{"index":"x"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Saved{Volume: 7}
	if err := ReadJSON(path, &s); !errors.Is(err, ErrCorrupt) || s.Volume != 7 {
		t.Errorf("%v, volume %d", err, s.Volume)
	}
}

func TestSaverWritesTheNewestState(t *testing.T) {
	dir := t.TempDir()
	var failures []error
	sv := NewSaver(dir, func(err error) { failures = append(failures, err) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sv.Run(ctx); close(done) }()
	for v := 1; v <= 50; v++ {
		sv.Save(Saved{Volume: v}, Urgency(v%2))
	}
	cancel()
	<-done
	sv.Flush()
	s, err := Load(dir)
	if err != nil || s.Volume != 50 {
		t.Errorf("after flush: volume %d %v, want the newest (50)", s.Volume, err)
	}
	if len(failures) > 0 {
		t.Error(failures)
	}
}

func TestCloneIsDeep(t *testing.T) {
	a := Saved{Queue: &Queue{Index: 1}, Resume: map[string]ResumePoint{"x": {Index: 1}}}
	b := a.Clone()
	b.Queue.Index = 2
	b.Resume["x"] = ResumePoint{Index: 3}
	if a.Queue.Index != 1 || a.Resume["x"].Index != 1 {
		t.Error("clone shares memory with the original")
	}
}

func TestParseChecksAStateDocument(t *testing.T) {
	good := `{"volume":30,"queue":{"folder_id":"f","index":1,"position":2.5},"resume":{"f":{"index":1,"track_id":"t","position":2.5,"updated_at":"2025-01-01T00:00:00Z"}}}`
	if s, err := Parse([]byte(good)); err != nil || s.Volume != 30 || s.Resume["f"].Position != 2.5 {
		t.Errorf("%+v %v", s, err)
	}
	if s, err := Parse([]byte(`{"volume":0}`)); err != nil || s.Resume == nil {
		t.Errorf("%+v %v", s, err)
	}
	for _, bad := range []string{
		`{"volume":101}`,
		`{"volume":1,"extra":true}`,
		`{"volume":1} {}`,
		`{"queue":{"folder_id":"","index":0,"position":0}}`,
		`{"resume":{"f":{"index":-1}}}`,
		`{"resume":{"f":{"index":0,"position":-3}}}`,
		`{"resume":{"":{"index":0}}}`,
		`[]`,
	} {
		if err := Check([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestMkdirAllMakesEveryMissingLevel(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "c")
	if err := MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b"), dir} {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v", d, fi, err)
		}
	}
	if err := MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("existing directory: %v", err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(file, 0o700); err == nil {
		t.Fatal("a file where the directory should be: no error")
	}
	if err := MkdirAll(filepath.Join(file, "sub"), 0o700); err == nil {
		t.Fatal("a directory below a file: no error")
	}
}

func TestWriteFileMakesItsDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "dir", "x.json")
	if err := WriteFile(path, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{}\n" {
		t.Fatalf("%q %v", b, err)
	}
}

func TestRemove(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("still there: %v", err)
	}
	if err := Remove(path); err != nil {
		t.Fatalf("a missing file: %v", err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "y"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path); err == nil {
		t.Fatal("a directory that is not empty: no error")
	}
}

// What interrupted writes left, at any depth, goes; everything else stays,
// files whose names only look alike included.
func TestRemoveAllTempsTakesOnlyInterruptedWrites(t *testing.T) {
	dir := t.TempDir()
	files := map[string]bool{ // path: a temporary of WriteFile
		".settings.json.tmp-123":                 true,
		"household/cards/.04ab.json.tmp-99":      true,
		"settings.json":                          false,
		"household/cards/04ab.json":              false,
		".syncthing.04ab.json.tmp":               false, // Syncthing's own, its to clean
		"media.tmp-1":                            false, // not hidden: not ours
		"household/cards/.stfolder/.x.tmp-check": true,
	}
	for p := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n := RemoveAllTemps(dir); n != 3 {
		t.Errorf("removed %d, want 3", n)
	}
	for p, temp := range files {
		_, err := os.Stat(filepath.Join(dir, p))
		if gone := errors.Is(err, fs.ErrNotExist); gone != temp {
			t.Errorf("%s: gone %v, want %v", p, gone, temp)
		}
	}
	// Written since, a file is whole and the sweep leaves it.
	if err := WriteFile(filepath.Join(dir, "settings.json"), []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if n := RemoveAllTemps(dir); n != 0 {
		t.Errorf("a second sweep removed %d", n)
	}
}
