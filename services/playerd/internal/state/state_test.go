package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
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
		sv.Save(Saved{Volume: v})
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

// A failed write is reported with the time failures began, and cleared by
// the next write that succeeds.
func TestSaverReportsItsLastFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(dir, nil, 0o644); err != nil { // a file where the directory should be
		t.Fatal(err)
	}
	var logged []error
	sv := NewSaver(dir, func(err error) { logged = append(logged, err) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sv.Run(ctx); close(done) }()
	cancel()
	<-done
	if since, err := sv.Err(); err != nil || !since.IsZero() {
		t.Fatalf("before any write: %v %v", since, err)
	}
	before := time.Now()
	sv.write(Saved{Volume: 1})
	since, err := sv.Err()
	if err == nil || since.Before(before) {
		t.Fatalf("after a failed write: %v %v", since, err)
	}
	sv.write(Saved{Volume: 2})
	if again, err := sv.Err(); err == nil || !again.Equal(since) {
		t.Errorf("a second failure moved the start of the outage: %v -> %v (%v)", since, again, err)
	}
	if len(logged) != 1 {
		t.Errorf("the same failure was reported %d times: %v", len(logged), logged)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	sv.write(Saved{Volume: 3})
	if since, err := sv.Err(); err != nil || !since.IsZero() {
		t.Errorf("after a successful write: %v %v", since, err)
	}
	if s, err := Load(dir); err != nil || s.Volume != 3 {
		t.Errorf("saved %+v %v", s, err)
	}
}

func TestProblemNamesTheCondition(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("state: write state.json: %w", &os.PathError{Op: "write", Path: "/perm/playerd/x", Err: syscall.ENOSPC}): "storage is full",
		&os.PathError{Op: "open", Path: "/perm/x", Err: syscall.EROFS}:                                                      "storage is read-only",
		&os.PathError{Op: "open", Path: "/perm/x", Err: syscall.EACCES}:                                                     "no permission to write to the storage",
		errors.New("something else"): "writing to the storage failed",
	} {
		if got := Problem(err); got != want {
			t.Errorf("Problem(%v) = %q, want %q", err, got, want)
		}
	}
}

// Temporary files of writes a crash interrupted are removed at start; the
// state and other files stay.
func TestLoadRemovesLeftoverTemps(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".state.json.tmp-123", ".box_id.tmp-9", "state.json", "settings.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"volume":5,"resume":{}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := Load(dir); err != nil || s.Volume != 5 {
		t.Fatalf("%+v %v", s, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != "settings.json" || names[1] != "state.json" {
		t.Errorf("left %v", names)
	}
}
