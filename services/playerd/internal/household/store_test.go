package household

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

type value struct {
	Action string `json:"action"`
	Name   string `json:"name,omitempty"`
}

// box is one box's store over its own data directory, with a wall clock
// the test sets.
type box struct {
	data  string
	s     *Store
	clock *time.Time
}

func newBox(t *testing.T, id string, at time.Time) *box {
	t.Helper()
	b := &box{data: t.TempDir(), clock: &at}
	s, err := Open(b.data, id, func() time.Time { return *b.clock })
	if err != nil {
		t.Fatal(err)
	}
	b.s = s
	return b
}

func (b *box) file(k Kind, name string) string { return filepath.Join(Dir(b.data), string(k), name) }

func (b *box) put(t *testing.T, k Kind, id string, v value) {
	t.Helper()
	if _, err := b.s.Put(k, id, v); err != nil {
		t.Fatal(err)
	}
}

// list is the live values of k by id.
func (b *box) list(t *testing.T, k Kind) map[string]value {
	t.Helper()
	items, err := b.s.List(k)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]value{}
	for _, it := range items {
		var v value
		if err := json.Unmarshal(it.Value, &v); err != nil {
			t.Fatal(err)
		}
		out[it.ID] = v
	}
	return out
}

// names lists the files of kind k, sorted.
func (b *box) names(t *testing.T, k Kind) []string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(Dir(b.data), string(k)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pull does what Syncthing does with a file changed only on from: its
// version replaces to's, through a temporary name and a rename.
func pull(t *testing.T, from, to *box, k Kind, name string) {
	t.Helper()
	tmp := to.file(k, ".syncthing."+name+".tmp")
	write(t, tmp, read(t, from.file(k, name)))
	if err := os.Rename(tmp, to.file(k, name)); err != nil {
		t.Fatal(err)
	}
}

const conflictSuffix = ".sync-conflict-20261128-210000-"

// conflict does what Syncthing does with a file changed on both boxes:
// on each, one version stays under the name and the other becomes a
// conflict file named for the losing device. keepOn tells which box's
// version Syncthing kept under the name, on both boxes.
func conflict(t *testing.T, a, b *box, k Kind, id string, keepA bool) {
	t.Helper()
	name := id + ".json"
	va, vb := read(t, a.file(k, name)), read(t, b.file(k, name))
	kept, lost, dev := va, vb, "BBBBBBB"
	if !keepA {
		kept, lost, dev = vb, va, "AAAAAAA"
	}
	for _, x := range []*box{a, b} {
		write(t, x.file(k, name), kept)
		write(t, x.file(k, id+conflictSuffix+dev+".json"), lost)
	}
}

func reconcile(t *testing.T, b *box) Report {
	t.Helper()
	rep, err := b.s.Reconcile()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

var t0 = time.Date(2026, 11, 28, 21, 0, 0, 0, time.UTC)

// Two boxes change different cards while apart: both changes survive on
// both, because they are different files.
func TestDifferentEntriesBothSurvive(t *testing.T) {
	a, b := newBox(t, "aaaa", t0), newBox(t, "bbbb", t0)
	a.put(t, Cards, "1", value{Action: "stop"})
	b.put(t, Cards, "2", value{Action: "pause"})
	a.put(t, Stations, "0a", value{Action: "radio A"})
	b.put(t, Stations, "0b", value{Action: "radio B"})
	pull(t, a, b, Cards, "1.json")
	pull(t, b, a, Cards, "2.json")
	pull(t, a, b, Stations, "0a.json")
	pull(t, b, a, Stations, "0b.json")
	for _, x := range []*box{a, b} {
		reconcile(t, x)
		if got := x.list(t, Cards); len(got) != 2 || got["1"].Action != "stop" || got["2"].Action != "pause" {
			t.Errorf("%s cards: %v", x.s.Box(), got)
		}
		if got := x.list(t, Stations); len(got) != 2 {
			t.Errorf("%s stations: %v", x.s.Box(), got)
		}
	}
}

// The same card changed on two boxes converges to the version with the
// higher (stamp, box id) on both, whichever version Syncthing kept under
// the name, and no conflict file is left.
func TestSameEntryConvergesByTheRule(t *testing.T) {
	for _, tc := range []struct {
		name       string
		aAt, bAt   time.Time
		keepA      bool
		wantAction string
	}{
		{"later stamp wins, kept", t0, t0.Add(time.Second), false, "B"},
		{"later stamp wins, lost", t0, t0.Add(time.Second), true, "B"},
		{"later stamp wins on a", t0.Add(time.Second), t0, false, "A"},
		{"same stamp: higher box id", t0, t0, true, "B"},
		{"same stamp: higher box id, kept", t0, t0, false, "B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newBox(t, "aaaa", tc.aAt), newBox(t, "bbbb", tc.bAt)
			a.put(t, Cards, "7", value{Action: "A"})
			b.put(t, Cards, "7", value{Action: "B"})
			conflict(t, a, b, Cards, "7", tc.keepA)
			for _, x := range []*box{a, b} {
				if rep := reconcile(t, x); rep.Resolved != 1 {
					t.Errorf("%s: %+v", x.s.Box(), rep)
				}
				if got := x.list(t, Cards)["7"].Action; got != tc.wantAction {
					t.Errorf("%s: %q, want %q", x.s.Box(), got, tc.wantAction)
				}
				if n := x.names(t, Cards); !slices.Equal(n, []string{"7.json"}) {
					t.Errorf("%s: files %v", x.s.Box(), n)
				}
			}
			if string(read(t, a.file(Cards, "7.json"))) != string(read(t, b.file(Cards, "7.json"))) {
				t.Error("the boxes keep different files: Syncthing would see a new conflict")
			}
		})
	}
}

// An edit made after seeing another box's edit wins over it even when the
// editing box's clock is behind (by up to MaxAhead): the clock moved past
// the stamp it saw.
func TestAnEditAfterSeeingWinsWithASlowClock(t *testing.T) {
	ahead := MaxAhead - time.Second
	a, b := newBox(t, "aaaa", t0.Add(ahead)), newBox(t, "bbbb", t0)
	a.put(t, Cards, "7", value{Action: "A"})
	pull(t, a, b, Cards, "7.json")
	reconcile(t, b)
	b.put(t, Cards, "7", value{Action: "B"})
	a.put(t, Cards, "8", value{Action: "x"}) // a's clock moves on too
	if e, _, _ := b.s.Get(Cards, "7"); e.Stamp.Wall != t0.Add(ahead).UnixMilli() || e.Stamp.Logical == 0 {
		t.Errorf("b's stamp %v is not past a's", e.Stamp)
	}
	pull(t, b, a, Cards, "7.json")
	if got := a.list(t, Cards)["7"].Action; got != "B" {
		t.Errorf("a has %q", got)
	}
}

// A deleted card stays deleted: its tombstone beats the older version a
// box that was away still holds, and the order of creation survives.
func TestDeletionsDoNotComeBack(t *testing.T) {
	a, b := newBox(t, "aaaa", t0), newBox(t, "bbbb", t0)
	a.put(t, Cards, "7", value{Action: "old"})
	pull(t, a, b, Cards, "7.json")
	*a.clock = t0.Add(time.Minute)
	if changed, err := a.s.Delete(Cards, "7"); err != nil || !changed {
		t.Fatal(changed, err)
	}
	if changed, err := a.s.Delete(Cards, "7"); err != nil || changed {
		t.Error("deleting twice wrote again:", changed, err)
	}
	if len(a.list(t, Cards)) != 0 {
		t.Fatal("deleted card listed")
	}
	// Syncthing keeps b's stale copy beside the tombstone, whichever way.
	for _, keepA := range []bool{true, false} {
		b2 := newBox(t, "bbbb", t0)
		write(t, b2.file(Cards, "7.json"), read(t, b.file(Cards, "7.json")))
		a2 := newBox(t, "aaaa", t0)
		write(t, a2.file(Cards, "7.json"), read(t, a.file(Cards, "7.json")))
		conflict(t, a2, b2, Cards, "7", keepA)
		for _, x := range []*box{a2, b2} {
			reconcile(t, x)
			if got := x.list(t, Cards); len(got) != 0 {
				t.Errorf("keepA=%v: %s has %v again", keepA, x.s.Box(), got)
			}
			if e, ok, _ := x.s.Get(Cards, "7"); !ok || !e.Deleted {
				t.Errorf("keepA=%v: tombstone gone: %+v", keepA, e)
			}
		}
	}
	pull(t, a, b, Cards, "7.json")
	if len(b.list(t, Cards)) != 0 {
		t.Error("the deletion did not reach b")
	}
	// Taught again later, the card is new.
	b.put(t, Cards, "7", value{Action: "new"})
	if got := b.list(t, Cards)["7"].Action; got != "new" {
		t.Errorf("taught again: %q", got)
	}
}

func TestListKeepsTheOrderOfCreation(t *testing.T) {
	a := newBox(t, "aaaa", t0)
	for _, id := range []string{"ff", "00", "aa"} {
		a.put(t, Stations, id, value{Action: id})
	}
	a.put(t, Stations, "ff", value{Action: "renamed"}) // an edit keeps its place
	items, err := a.s.List(Stations)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	if !slices.Equal(ids, []string{"ff", "00", "aa"}) {
		t.Errorf("order %v", ids)
	}
	if changed, err := a.s.Put(Stations, "00", value{Action: "00"}); err != nil || changed {
		t.Error("an unchanged value was written again:", changed, err)
	}
}

// Files Syncthing is still receiving, its own files and a torn write of
// this box are never entries, and Reconcile leaves them to their owners.
func TestTemporaryAndMetaFilesIgnored(t *testing.T) {
	a := newBox(t, "aaaa", t0)
	a.put(t, Cards, "1", value{Action: "stop"})
	partial := []byte(`{"version":1,"stamp":{"wall_ms":9999999999999,"logical":0},"box":"zzzz","created":{"wall_ms":1,"logical":0},"value":{"action":"half`)
	others := []string{".syncthing.2.json.tmp", "~syncthing~3.json.tmp", ".1.json.tmp-123456", ".stignore", ".stfolder"}
	for _, n := range others {
		write(t, a.file(Cards, n), partial)
	}
	if err := os.Mkdir(a.file(Cards, ".stversions"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(Dir(a.data), ".stfolder"), nil)
	if got := a.list(t, Cards); len(got) != 1 || got["1"].Action != "stop" {
		t.Errorf("listed %v", got)
	}
	if rep := reconcile(t, a); rep != (Report{}) {
		t.Errorf("reconcile did %+v", rep)
	}
	if n := a.names(t, Cards); len(n) != len(others)+2 {
		t.Errorf("files %v", n)
	}
	// The clock was not moved by the partial file's stamp.
	a.put(t, Cards, "1", value{Action: "pause"})
	if e, _, _ := a.s.Get(Cards, "1"); e.Stamp.Wall != t0.UnixMilli() {
		t.Errorf("stamp %v", e.Stamp)
	}
}

func TestConflictNames(t *testing.T) {
	for name, want := range map[string]string{
		"7.sync-conflict-20261128-210000-ABCDEF1.json":                                       "7.json",
		"7.sync-conflict-20261128-210000-ABCDEF1.sync-conflict-20261128-210500-XYZ1234.json": "7.json",
		"Folge 1.sync-conflict-20261128-210000-ABCDEF1.mp3":                                  "Folge 1.mp3",
		"noext.sync-conflict-20261128-210000-ABCDEF1":                                        "noext",
	} {
		if got, ok := ConflictOf(name); !ok || got != want {
			t.Errorf("%s: %q %v", name, got, ok)
		}
	}
	for _, name := range []string{"7.json", "7.sync-conflict.json", "7.sync-conflict-2026-210000-ABCDEF1.json"} {
		if _, ok := ConflictOf(name); ok {
			t.Errorf("%s taken for a conflict file", name)
		}
	}
	for name, want := range map[string]bool{
		".syncthing.Folge 1.mp3.tmp": true, "~syncthing~Folge 1.mp3.tmp": true, ".stfolder": true,
		".stignore": true, ".stversions": true, ".cards.json.tmp-1": true, "Folge 1.mp3": false,
		"syncthing.mp3": false, "x.tmp": false,
	} {
		if Ignored(name) != want {
			t.Errorf("Ignored(%q) = %v", name, !want)
		}
	}
}

// A conflict whose one version is not an entry (a file some other program
// put there) keeps the valid one; a conflict alone, its main file deleted,
// becomes the entry.
func TestBrokenAndLoneConflictFiles(t *testing.T) {
	a := newBox(t, "aaaa", t0)
	a.put(t, Cards, "1", value{Action: "stop"})
	a.put(t, Cards, "2", value{Action: "pause"})
	good1 := read(t, a.file(Cards, "1.json"))
	write(t, a.file(Cards, "1"+conflictSuffix+"ZZZZZZZ.json"), []byte("{not json"))
	lone := read(t, a.file(Cards, "2.json"))
	if err := os.Remove(a.file(Cards, "2.json")); err != nil {
		t.Fatal(err)
	}
	write(t, a.file(Cards, "2"+conflictSuffix+"ZZZZZZZ.json"), lone)
	rep, err := a.s.Reconcile()
	if err == nil || !strings.Contains(err.Error(), "1.sync-conflict") {
		t.Errorf("the broken file is not reported: %v", err)
	}
	if rep.Resolved != 2 || rep.Rewritten != 1 {
		t.Errorf("%+v", rep)
	}
	if n := a.names(t, Cards); !slices.Equal(n, []string{"1.json", "2.json"}) {
		t.Errorf("files %v", n)
	}
	if string(read(t, a.file(Cards, "1.json"))) != string(good1) || string(read(t, a.file(Cards, "2.json"))) != string(lone) {
		t.Error("a version changed")
	}
}

// A write is atomic: a power cut during it (here, a write that leaves its
// temporary file torn and never renames it) keeps the entry as it was, and
// the torn file is never read.
func TestCrashDuringWriteChangesNothing(t *testing.T) {
	a := newBox(t, "aaaa", t0)
	a.put(t, Cards, "1", value{Action: "stop"})
	t.Cleanup(func() { writeFile = state.WriteFile })
	writeFile = func(path string, data []byte) error {
		torn := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-42")
		write(t, torn, data[:len(data)/2])
		return errors.New("power cut")
	}
	if _, err := a.s.Put(Cards, "1", value{Action: "pause"}); err == nil {
		t.Fatal("the crashed write succeeded")
	}
	if _, err := a.s.Delete(Cards, "1"); err == nil {
		t.Fatal("the crashed delete succeeded")
	}
	writeFile = state.WriteFile
	b, err := Open(a.data, "aaaa", nil) // the box starts again
	if err != nil {
		t.Fatal(err)
	}
	items, err := b.List(Cards)
	if err != nil || len(items) != 1 || !strings.Contains(string(items[0].Value), `"stop"`) {
		t.Errorf("after the crash: %v %v", items, err)
	}
}

func TestOpenNeedsABoxID(t *testing.T) {
	if _, err := Open(t.TempDir(), "", nil); err == nil {
		t.Error("opened without a box id")
	}
	a := newBox(t, "aaaa", t0)
	if _, err := a.s.Put(Cards, "../x", value{}); err == nil {
		t.Error("an id that is a path was written")
	}
}
