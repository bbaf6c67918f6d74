package box

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// The folder modes are on disk before they are used, told once per change,
// follow renames, forget deletions and survive a reload; a bad file is
// refused whole.
func TestModeStore(t *testing.T) {
	dir := t.TempDir()
	told := 0
	s := &modeStore{dir: dir, changed: func() { told++ }}
	if err := s.load(); err != nil {
		t.Fatal(err)
	}
	if s.of("a") != "" || len(s.all()) != 0 {
		t.Fatalf("an empty store: %v", s.all())
	}
	if data, _ := s.read(); data != nil {
		t.Errorf("a backup of no modes: %s", data)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.set("a", player.ModeShuffle))
	must(s.set("b", player.ModeSingle))
	must(s.set("b", player.ModeSingle)) // no change: not written, not told
	if told != 2 {
		t.Errorf("told %d times, want 2", told)
	}
	on := &modeStore{dir: dir, changed: func() {}}
	must(on.load())
	if on.of("a") != player.ModeShuffle || on.of("b") != player.ModeSingle {
		t.Errorf("on disk: %v", on.all())
	}
	must(s.moved(map[string]library.Move{"a": {NewID: "a2"}, "b": {}}))
	if m := s.all(); len(m) != 1 || m["a2"] != player.ModeShuffle {
		t.Errorf("after a rename of a and a delete of b: %v", m)
	}
	must(s.set("a2", player.ModeNormal)) // normal is no entry
	if len(s.all()) != 0 {
		t.Errorf("normal kept an entry: %v", s.all())
	}
	for _, bad := range []string{`{"a":"party"}`, `{"":"shuffle"}`, `["shuffle"]`, `{"a":"shuffle"} {}`} {
		if err := CheckFolderModes([]byte(bad)); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%s: %v", bad, err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, FolderModesFile), []byte(`{"x":"random_one"}`), 0o644))
	must(s.reload())
	if s.of("x") != player.ModeRandomOne {
		t.Errorf("after a restore: %v", s.all())
	}
}
