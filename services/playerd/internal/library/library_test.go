package library

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

func names(tracks []Track) []string {
	var out []string
	for _, t := range tracks {
		out = append(out, t.Title)
	}
	return out
}

func TestNaturalOrder(t *testing.T) {
	in := []string{"Folge 10", "folge 2", "Folge 1", "Folge 02b", "Anhang", "Folge 100", "Folge 9"}
	slices.SortFunc(in, func(a, b string) int {
		if naturalLess(a, b) {
			return -1
		}
		return 1
	})
	want := []string{"Anhang", "Folge 1", "folge 2", "Folge 02b", "Folge 9", "Folge 10", "Folge 100"}
	if !slices.Equal(in, want) {
		t.Errorf("got %q\nwant %q", in, want)
	}
}

func TestScanFoldersTracksAndIDs(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"Folge 10.wav", "Folge 2.wav", "Folge 1.wav", ".hidden.wav"} {
		if err := testmedia.WriteTone(filepath.Join(root, "Hoerspiele", "Serie", name), 0.2, 44100, 440); err != nil {
			t.Fatal(err)
		}
	}
	must(t, testmedia.WriteTone(filepath.Join(root, ".Trash", "x.wav"), 0.1, 44100, 440))
	must(t, os.WriteFile(filepath.Join(root, "Hoerspiele", "Serie", "notes.txt"), []byte("x"), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "Leer"), 0o755))

	l := New(root, "", nil)
	st, err := l.Scan()
	if err != nil {
		t.Fatal(err)
	}
	if st.Folders != 1 || st.Tracks != 3 {
		t.Fatalf("stats %+v, want 1 folder with 3 tracks", st)
	}
	f := l.Folders()[0]
	if f.Name != "Serie" || f.Relative != "Hoerspiele/Serie" || f.ID != ID("Hoerspiele/Serie") || len(f.ID) != 32 {
		t.Errorf("folder %+v", f)
	}
	if got := names(f.Tracks); !slices.Equal(got, []string{"Folge 1", "Folge 2", "Folge 10"}) {
		t.Errorf("tracks %q", got)
	}
	if d := f.Tracks[0].Duration; d < 0.19 || d > 0.21 {
		t.Errorf("duration %v, want 0.2", d)
	}
	// The id is stable across scans and instances.
	l2 := New(root, "", nil)
	must2(l2.Scan())
	if g, ok := l2.Folder(f.ID); !ok || g.Tracks[1].ID != f.Tracks[1].ID {
		t.Error("ids changed between scans")
	}
	if _, ok := l.Folder("unknown"); ok {
		t.Error("unknown id found")
	}
	if top := l.TopLevel(); !slices.Equal(top, []string{"Hoerspiele", "Leer"}) {
		t.Errorf("top level %q", top)
	}
}

// Links are followed inside the media root and refused when they leave it,
// so nothing outside the library can be listed or played.
func TestSymlinksStayInsideTheRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	must(t, testmedia.WriteTone(filepath.Join(outside, "Secret", "a.wav"), 0.1, 44100, 440))
	must(t, testmedia.WriteTone(filepath.Join(root, "Real", "b.wav"), 0.1, 44100, 440))
	must(t, os.Symlink(filepath.Join(outside, "Secret"), filepath.Join(root, "Escape")))
	must(t, os.Symlink(filepath.Join(outside, "Secret", "a.wav"), filepath.Join(root, "Real", "c.wav")))
	must(t, os.Symlink(filepath.Join(root, "Real"), filepath.Join(root, "Alias")))
	must(t, os.Symlink(root, filepath.Join(root, "Real", "loop")))
	l := New(root, "", nil)
	st, err := l.Scan()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range l.Folders() {
		for _, tr := range f.Tracks {
			if filepath.Dir(tr.Path) == filepath.Join(outside, "Secret") {
				t.Errorf("track outside the root: %s", tr.Path)
			}
		}
	}
	if st.Skipped < 2 {
		t.Errorf("skipped %d, want the two escaping links refused", st.Skipped)
	}
	if st.Tracks != 1 {
		t.Errorf("tracks %d: the inside link and the loop must not duplicate or hang", st.Tracks)
	}
}

func TestTagsCoverAndFallbacks(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "Album")
	must(t, os.MkdirAll(dir, 0o755))
	mp3, err := os.ReadFile("../decode/testdata/tone.mp3")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "01.mp3"), mp3, 0o644))
	must(t, testmedia.WriteTone(filepath.Join(dir, "02 Ohne Tags.wav"), 0.1, 44100, 440))
	png := []byte("\x89PNG\r\n\x1a\n" + "rest of a picture")
	must(t, os.WriteFile(filepath.Join(dir, "Cover.PNG"), png, 0o644))
	l := New(root, "", nil)
	must2(l.Scan())
	f := l.Folders()[0]
	if tr := f.Tracks[0]; tr.Title != "Ton A" || tr.Artist != "storybox" || tr.Album != "Fixtures" {
		t.Errorf("tags %+v", tr)
	}
	if f.Tracks[1].Title != "02 Ohne Tags" {
		t.Errorf("fallback title %q", f.Tracks[1].Title)
	}
	if f.Cover == nil || *f.Cover != "/api/cover/"+f.ID {
		t.Fatalf("cover %v", f.Cover)
	}
	data, mime, err := l.Cover(f.ID)
	if err != nil || mime != "image/png" || string(data) != string(png) {
		t.Errorf("cover: %v %q", err, mime)
	}
	if _, _, err := l.Cover("nope"); err != ErrNotFound {
		t.Errorf("unknown cover: %v", err)
	}
}

// An unchanged library is not read again; a changed file is.
func TestScanCache(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	cache := filepath.Join(data, "cache.json")
	must(t, testmedia.Library(root, map[string][]float64{"A": {0.1, 0.1}, "B": {0.1}}))
	st, err := New(root, cache, nil).Scan()
	if err != nil || st.Read != 3 {
		t.Fatalf("first scan %+v %v", st, err)
	}
	st, _ = New(root, cache, nil).Scan()
	if st.Read != 0 || st.Tracks != 3 {
		t.Errorf("second scan read %d files, want 0 (cached)", st.Read)
	}
	must(t, testmedia.WriteTone(filepath.Join(root, "A", "Folge 1.wav"), 0.3, 44100, 440))
	must(t, os.WriteFile(cache+".junk", nil, 0o644))
	l := New(root, cache, nil)
	st, _ = l.Scan()
	if st.Read != 1 {
		t.Errorf("after a change read %d files, want 1", st.Read)
	}
	if d := l.Folders()[0].Tracks[0].Duration; d < 0.29 {
		t.Errorf("changed file's duration %v", d)
	}
	must(t, os.WriteFile(cache, []byte("{corrupt"), 0o644))
	if st, err := New(root, cache, nil).Scan(); err != nil || st.Read != 3 {
		t.Errorf("corrupt cache: %+v %v (must rescan, not fail)", st, err)
	}
}

func TestMissingRoot(t *testing.T) {
	if _, err := New(filepath.Join(t.TempDir(), "nope"), "", nil).Scan(); err == nil {
		t.Error("scan of a missing root succeeded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func must2(_ Stats, err error) {
	if err != nil {
		panic(err)
	}
}

// A file no decoder can play is left out and reported with its error; the
// cached view at start lists what the last scan found, reading nothing,
// and still reports the problem.
func TestUnplayableFilesAreReportedAndCached(t *testing.T) {
	root, cachePath := t.TempDir(), filepath.Join(t.TempDir(), "cache.json")
	must(t, testmedia.WriteTone(filepath.Join(root, "A", "gut.wav"), 0.1, 44100, 440))
	must(t, os.WriteFile(filepath.Join(root, "A", "kaputt.wav"), []byte("RIFF\x2b\x00\x00\x00WAVEfmt \x00\x00\x00\x00"), 0o644))
	l := New(root, cachePath, nil)
	st, err := l.Scan()
	if err != nil {
		t.Fatal(err)
	}
	r := l.Report()
	if st.Tracks != 1 || st.Problems != 1 || !r.Scanned || len(r.Problems) != 1 || r.Problems[0].Path != "A/kaputt.wav" || r.Problems[0].Error == "" {
		t.Fatalf("stats %+v, report %+v", st, r)
	}

	must(t, testmedia.WriteTone(filepath.Join(root, "A", "neu.wav"), 0.1, 44100, 440))
	quick := New(root, cachePath, nil)
	st, err = quick.ScanCached()
	if err != nil {
		t.Fatal(err)
	}
	r = quick.Report()
	if st.Read != 0 || st.Tracks != 1 || r.Scanned || len(r.Problems) != 1 {
		t.Errorf("cached view: stats %+v, report %+v; want the one known track, nothing read, not scanned", st, r)
	}
	if st, _ = quick.Scan(); st.Tracks != 2 || st.Read != 1 || !quick.Report().Scanned {
		t.Errorf("full scan after the cached view: %+v", st)
	}
}

// Changed wakes whoever waits at the end of every scan, and not before.
func TestChangedAfterEachScan(t *testing.T) {
	root := t.TempDir()
	if err := testmedia.WriteTone(filepath.Join(root, "A", "1.wav"), 0.1, 44100, 440); err != nil {
		t.Fatal(err)
	}
	l := New(root, "", nil)
	for i := range 2 {
		ch := l.Changed()
		select {
		case <-ch:
			t.Fatalf("scan %d: closed before the scan", i)
		default:
		}
		if _, err := l.Scan(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
		default:
			t.Fatalf("scan %d: not closed after the scan", i)
		}
	}
	// A failed scan leaves the view, and says nothing.
	ch := l.Changed()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Scan(); err == nil {
		t.Fatal("a scan of a missing root succeeded")
	}
	select {
	case <-ch:
		t.Error("a failed scan signalled a change")
	default:
	}
}

// The scan reads files in parallel, yet its outcome is the walk's order:
// tracks in natural order, problems as the folders were met. Its progress
// counts every file found and done, and ends with the scan.
func TestParallelScanKeepsOrderAndCountsProgress(t *testing.T) {
	root := t.TempDir()
	var wantProblems []string
	for _, dir := range []string{"A", "B", "C"} {
		for i := range 12 {
			name := filepath.Join(dir, "Folge "+string(rune('a'+i))+".wav")
			if i%4 == 3 {
				must(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
				must(t, os.WriteFile(filepath.Join(root, name), []byte("RIFF\x2b\x00\x00\x00WAVEfmt "), 0o644))
				wantProblems = append(wantProblems, filepath.ToSlash(name))
				continue
			}
			must(t, testmedia.WriteTone(filepath.Join(root, name), 0.05, 44100, 440))
		}
	}
	l := New(root, "", nil)
	changed := l.Progressed()
	st, err := l.Scan()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Error("progress did not signal")
	}
	if p := l.Progress(); p != (Progress{Scanning: false, Done: 36, Total: 36}) {
		t.Errorf("progress after the scan %+v, want 36 of 36 done", p)
	}
	if st.Tracks != 27 || st.Problems != 9 {
		t.Fatalf("stats %+v", st)
	}
	var problems []string
	for _, p := range l.Report().Problems {
		problems = append(problems, p.Path)
	}
	if !slices.Equal(problems, wantProblems) {
		t.Errorf("problems %q\nwant %q", problems, wantProblems)
	}
	for _, f := range l.Folders() {
		for i, tr := range f.Tracks {
			if want := "Folge " + string(rune('a'+i+i/3)); tr.Title != want {
				t.Errorf("%s track %d: %q, want %q", f.Name, i, tr.Title, want)
			}
		}
	}
}

// Without a cache the quick view at start is empty at once, reading
// nothing, and still knows the top-level categories for the home screen.
func TestQuickViewOfANeverScannedLibrary(t *testing.T) {
	root := t.TempDir()
	must(t, testmedia.WriteTone(filepath.Join(root, "Musik", "A", "1.wav"), 0.05, 44100, 440))
	l := New(root, filepath.Join(t.TempDir(), "cache.json"), nil)
	st, err := l.ScanCached()
	if err != nil || st != (Stats{}) || len(l.Folders()) != 0 || l.Scanned() {
		t.Errorf("quick view: %+v %v, %d folders, scanned %v", st, err, len(l.Folders()), l.Scanned())
	}
	if top := l.TopLevel(); !slices.Equal(top, []string{"Musik"}) {
		t.Errorf("top level %q", top)
	}
	if p := l.Progress(); p.Scanning || p.Total != 0 {
		t.Errorf("the quick view counted as a scan: %+v", p)
	}
}
