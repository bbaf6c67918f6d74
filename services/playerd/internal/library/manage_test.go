package library

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// tree lists every file and directory below root, hidden ones included.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func managed(t *testing.T) (*Library, string) {
	t.Helper()
	root := t.TempDir()
	must(t, testmedia.Library(root, map[string][]float64{"Hoerspiele/Serie": {0.2, 0.2}}))
	l := New(root, filepath.Join(t.TempDir(), "cache.json"), nil)
	if _, err := l.Scan(); err != nil {
		t.Fatal(err)
	}
	return l, root
}

func isKind(t *testing.T, err error, k fault.Kind) {
	t.Helper()
	if !errors.Is(err, k) {
		t.Fatalf("err = %v, want kind %s", err, k)
	}
}

func TestFoldersCreateRenameDelete(t *testing.T) {
	l, root := managed(t)
	outside := t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(root, "Evil")))
	must(t, os.MkdirAll(filepath.Join(root, ".hidden"), 0o755))

	d, err := l.CreateFolder("", "  Musik ")
	if err != nil || d.Relative != "Musik" || d.ID != ID("Musik") || d.Parent == nil || *d.Parent != ID("") || d.Tracks != 0 {
		t.Fatalf("create: %+v %v", d, err)
	}
	sub, err := l.CreateFolder(d.ID, "Lieder")
	if err != nil || sub.Relative != "Musik/Lieder" || *sub.Parent != d.ID {
		t.Fatalf("create below: %+v %v", sub, err)
	}
	_, err = l.CreateFolder("", "Musik")
	isKind(t, err, fault.Conflict)
	_, err = l.CreateFolder(ID("nope"), "x")
	isKind(t, err, fault.NotFound)
	for _, bad := range []string{"", "..", ".", "../x", "a/b", `a\b`, ".versteckt", "a\x00b", "tab\there", strings.Repeat("x", MaxName+1)} {
		_, err := l.CreateFolder("", bad)
		isKind(t, err, fault.Invalid)
	}
	// The link is neither listed nor reachable by its id.
	_, err = l.CreateFolder(ID("Evil"), "x")
	isKind(t, err, fault.NotFound)

	dirs, err := l.Dirs()
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, d := range dirs {
		rels = append(rels, d.Relative)
	}
	if !slices.Equal(rels, []string{"", "Hoerspiele", "Hoerspiele/Serie", "Musik", "Musik/Lieder"}) {
		t.Errorf("dirs %q", rels)
	}
	if dirs[2].Tracks != 2 {
		t.Errorf("Serie: %+v", dirs[2])
	}

	// A rename moves the ids of the folder and everything below it.
	serie, _ := l.Folder(ID("Hoerspiele/Serie"))
	d, c, err := l.RenameFolder(ID("Hoerspiele"), "Geschichten")
	if err != nil || d.Relative != "Geschichten" || c.From != "Hoerspiele" || c.To != "Geschichten" {
		t.Fatalf("rename: %+v %+v %v", d, c, err)
	}
	m, ok := c.Moves[serie.ID]
	if !ok || m.NewID != ID("Geschichten/Serie") || m.Tracks[serie.Tracks[0].ID] != ID("Geschichten/Serie/Folge 1.wav") {
		t.Errorf("moves %+v", c.Moves)
	}
	if f, ok := l.Folder(m.NewID); !ok || f.Tracks[0].ID != m.Tracks[serie.Tracks[0].ID] {
		t.Errorf("after rename the library has %+v", l.Folders())
	}
	// The scan cache moved with the files: nothing is read again.
	if st, err := l.Scan(); err != nil || st.Read != 0 {
		t.Errorf("scan after rename read %d files (%v)", st.Read, err)
	}
	_, _, err = l.RenameFolder(ID("Geschichten"), "Musik")
	isKind(t, err, fault.Conflict)
	_, _, err = l.RenameFolder(ID(""), "x")
	isKind(t, err, fault.Conflict)
	_, _, err = l.RenameFolder(ID("Geschichten"), "../outside")
	isKind(t, err, fault.Invalid)

	c, err = l.DeleteFolder(ID("Geschichten"))
	if err != nil || len(c.Moves) != 1 || c.Moves[m.NewID].NewID != "" || c.From != "Geschichten" {
		t.Fatalf("delete: %+v %v", c, err)
	}
	if !l.HasDir("Musik/Lieder") || l.HasDir("Evil") || l.HasDir("Geschichten") || l.HasDir(".hidden") || l.HasDir("../x") {
		t.Error("HasDir")
	}
	if _, err := os.Stat(filepath.Join(root, "Geschichten")); !os.IsNotExist(err) {
		t.Errorf("deleted folder still there: %v", err)
	}
	if len(l.Folders()) != 0 {
		t.Errorf("library after delete: %+v", l.Folders())
	}
	_, err = l.DeleteFolder(ID(""))
	isKind(t, err, fault.Conflict)
	_, err = l.DeleteFolder(ID("Evil"))
	isKind(t, err, fault.NotFound)
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("something reached the directory behind the link: %v", entries)
	}
}

func TestUploadKeepsOnlyAudio(t *testing.T) {
	l, root := managed(t)
	before := tree(t, root)
	id := ID("Hoerspiele/Serie")

	u, err := l.BeginUpload(id, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Add("../../etc/Folge 1.wav", bytes.NewReader(testmedia.Tone(0.3, 44100, 330))); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Add("Kapitel.bin", bytes.NewReader(testmedia.Tone(0.3, 44100, 330))); err != nil {
		t.Fatal(err)
	}
	_, err = u.Add("evil.wav", strings.NewReader("#!/bin/sh\necho this is no audio\n"))
	isKind(t, err, fault.Unsupported)
	files, err := u.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "Folge 1 (2).wav" || files[1].Name != "Kapitel.bin.wav" ||
		files[0].Relative != "Hoerspiele/Serie/Folge 1 (2).wav" || files[0].Format != "wav" {
		t.Errorf("files %+v", files)
	}
	f, _ := l.Folder(id)
	if len(f.Tracks) != 4 {
		t.Errorf("library has %d tracks after the upload, want 4", len(f.Tracks))
	}
	want := append(slices.Clone(before), "Hoerspiele/Serie/Folge 1 (2).wav", "Hoerspiele/Serie/Kapitel.bin.wav")
	slices.Sort(want)
	if got := tree(t, root); !slices.Equal(got, want) {
		t.Errorf("on disk %q\nwant %q", got, want)
	}

	// A refused or abandoned upload leaves nothing, temporary files
	// included.
	before = tree(t, root)
	u, err = l.BeginUpload(id, -1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.Add("a.wav", bytes.NewReader(testmedia.Tone(0.1, 44100, 330)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.Add("b.wav", io.MultiReader(strings.NewReader("RIFF"), iotest.ErrReader(io.ErrUnexpectedEOF)))
	isKind(t, err, fault.Invalid)
	u.Close()
	if got := tree(t, root); !slices.Equal(got, before) {
		t.Errorf("after an abandoned upload: %q\nwant %q", got, before)
	}
	_, err = l.BeginUpload(ID("Evil"), -1)
	isKind(t, err, fault.NotFound)
}

func TestUploadLimits(t *testing.T) {
	l, root := managed(t)
	l.SetLimits(Limits{File: 20000, Request: 30000, Cover: 1000, MinFree: 0})
	before := tree(t, root)
	id := ID("Hoerspiele/Serie")
	_, err := l.BeginUpload(id, 40000)
	isKind(t, err, fault.TooLarge)
	u, err := l.BeginUpload(id, -1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.Add("big.wav", bytes.NewReader(testmedia.Tone(1, 44100, 330)))
	isKind(t, err, fault.TooLarge)
	_, err = u.Add("a.wav", bytes.NewReader(testmedia.Tone(0.1, 44100, 330))) // 17.7 kB
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.Add("b.wav", bytes.NewReader(testmedia.Tone(0.1, 44100, 330))) // over the request
	isKind(t, err, fault.TooLarge)
	u.Close()
	if got := tree(t, root); !slices.Equal(got, before) {
		t.Errorf("after refused uploads: %q\nwant %q", got, before)
	}
	// No space to spare: refused before anything is written.
	l.SetLimits(Limits{File: 1 << 40, Request: 1 << 50, Cover: 1000, MinFree: 1 << 50})
	_, err = l.BeginUpload(id, 100)
	isKind(t, err, fault.TooLarge)
	u, err = l.BeginUpload(id, -1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.Add("a.wav", bytes.NewReader(testmedia.Tone(0.1, 44100, 330)))
	isKind(t, err, fault.TooLarge)
	u.Close()
	if got := tree(t, root); !slices.Equal(got, before) {
		t.Errorf("after a full disk: %q\nwant %q", got, before)
	}
}

func TestUploadsWaitForEachOther(t *testing.T) {
	l, _ := managed(t)
	u, err := l.BeginUpload("", -1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.CreateFolder("", "x")
	isKind(t, err, fault.Busy)
	u.Close()
	if _, err := l.CreateFolder("", "x"); err != nil {
		t.Error(err)
	}
}

func pngOf(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func TestSetCover(t *testing.T) {
	l, root := managed(t)
	dir := filepath.Join(root, "Hoerspiele", "Serie")
	must(t, os.WriteFile(filepath.Join(dir, "Folder.JPG"), []byte("old"), 0o644))
	id := ID("Hoerspiele/Serie")
	d, err := l.SetCover(id, bytes.NewReader(pngOf(8, 8)))
	if err != nil || d.Cover == nil {
		t.Fatalf("%+v %v", d, err)
	}
	data, mime, err := l.Cover(id)
	if err != nil || mime != "image/png" || !bytes.Equal(data, pngOf(8, 8)) {
		t.Errorf("cover %s %v", mime, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "Folder.JPG")); !os.IsNotExist(err) {
		t.Error("the old cover file is still there")
	}
	var g bytes.Buffer
	_ = gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 4, 4), []color.Color{color.Black}), nil)
	before := tree(t, root)
	for _, c := range []struct {
		data []byte
		kind fault.Kind
	}{
		{g.Bytes(), fault.Unsupported},
		{[]byte("hello"), fault.Unsupported},
		{pngOf(5000, 1), fault.Invalid},
		{pngOf(8, 8)[:40], fault.Invalid},
	} {
		_, err := l.SetCover(id, bytes.NewReader(c.data))
		isKind(t, err, c.kind)
	}
	l.SetLimits(Limits{Cover: 50})
	_, err = l.SetCover(id, bytes.NewReader(pngOf(8, 8)))
	isKind(t, err, fault.TooLarge)
	l.SetLimits(DefaultLimits())
	_, err = l.SetCover(ID("nope"), bytes.NewReader(pngOf(8, 8)))
	isKind(t, err, fault.NotFound)
	if got := tree(t, root); !slices.Equal(got, before) {
		t.Errorf("refused covers changed the disk: %q\nwant %q", got, before)
	}
}

func TestFileName(t *testing.T) {
	long := strings.Repeat("ä", 150) + ".mp3"
	for in, want := range map[string]string{
		"Folge 1.mp3":         "Folge 1.mp3",
		"../../etc/passwd":    "passwd",
		`C:\Users\x\Lied.ogg`: "Lied.ogg",
		".bashrc":             "bashrc",
		" .. ":                "upload",
		"":                    "upload",
		"a\x00b\nc.wav":       "abc.wav",
		"Ho\u0308rspiel.mp3":  "Hörspiel.mp3",
		"\xff\xfeok.flac":     "ok.flac",
		long:                  strings.Repeat("ä", 98) + ".mp3",
	} {
		if got := FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
	if n := withSuffix(strings.Repeat("a", MaxName-4)+".mp3", 12); len(n) > MaxName || !strings.HasSuffix(n, " (12).mp3") {
		t.Errorf("suffix: %q", n)
	}
}
