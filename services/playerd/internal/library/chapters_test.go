package library

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/decode"
)

// An audiobook's chapters are the folder's tracks, each playing alone; its
// M4A neighbours and its embedded cover are read as for other formats, and
// the cache keeps the chapters across scans.
func TestAudiobookChapters(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, "Hörbuch")
	must(t, os.MkdirAll(dir, 0o755))
	book, err := os.ReadFile("../decode/testdata/seed/tone.m4b")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "buch.m4b"), book, 0o644))
	m4a, err := os.ReadFile("../decode/testdata/tone.m4a")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "zugabe.m4a"), m4a, 0o644))
	cache := filepath.Join(data, "cache.json")
	for scan := range 2 {
		l := New(root, cache, nil)
		st, err := l.Scan()
		must(t, err)
		if scan == 1 && st.Read != 0 {
			t.Errorf("second scan read %d files", st.Read)
		}
		f := l.Folders()[0]
		if got := names(f.Tracks); len(got) != 4 || got[0] != "Kapitel 1" || got[2] != "Kapitel 3" || got[3] != "Ton A" {
			t.Fatalf("tracks %q", got)
		}
		for i, tr := range f.Tracks[:3] {
			if math.Abs(tr.Duration-0.1) > 1e-9 || tr.ID != ID("Hörbuch/buch.m4b#"+string(rune('1'+i))) || tr.Artist != "storybox" {
				t.Errorf("chapter %d: %+v", i+1, tr)
			}
			s, format, err := decode.Open(tr.Path)
			must(t, err)
			if n := s.Len(); n != int(0.1*float64(format.SampleRate)) {
				t.Errorf("chapter %d plays %d samples", i+1, n)
			}
			s.Close()
		}
		if f.Cover == nil {
			t.Error("the book's embedded cover is not the folder's")
		}
	}
}
