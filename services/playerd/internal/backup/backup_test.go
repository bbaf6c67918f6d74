package backup

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// box is a data directory with two configuration files and a secret.
type box struct {
	dir     string
	applied []string
}

func newBox(t *testing.T) *box {
	t.Helper()
	b := &box{dir: t.TempDir()}
	b.put(t, "a.json", `{"a":1}`)
	b.put(t, "b.json", `{"b":2}`)
	b.put(t, "secret.hash", "argon2id$do-not-leak")
	return b
}

func (b *box) put(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(b.dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// files are the box's backup list: JSON objects with one known key each.
func (b *box) files() []File {
	var out []File
	for _, name := range []string{"a.json", "b.json"} {
		key := strings.TrimSuffix(name, ".json")
		out = append(out, File{
			Name: name,
			Read: func() ([]byte, error) {
				data, err := os.ReadFile(filepath.Join(b.dir, name))
				if errors.Is(err, os.ErrNotExist) {
					return nil, nil
				}
				return data, err
			},
			Check: func(data []byte) error {
				var m map[string]int
				if err := json.Unmarshal(data, &m); err != nil || len(m) != 1 || m[key] < 1 {
					return fault.New(fault.Invalid, "%s must be {%q: positive}", name, key)
				}
				return nil
			},
			Apply: func() error { b.applied = append(b.applied, name); return nil },
		})
	}
	return out
}

// snapshot is every file of a directory with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

func archive(t *testing.T, b *box, media *os.Root) []byte {
	t.Helper()
	var buf bytes.Buffer
	m := Manifest{BoxID: "0b5e9c1e-2b5c-4f1e-9d1e-3c8a5b6f7a8d", Version: "test", CreatedAt: time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC)}
	if media != nil {
		if err := Write(&buf, m, b.files(), media.FS()); err != nil {
			t.Fatal(err)
		}
	} else if err := Write(&buf, m, b.files(), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBackupAndRestoreIntoAnotherBox(t *testing.T) {
	src := newBox(t)
	data := archive(t, src, nil)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"manifest.json", "a.json", "b.json"}) {
		t.Errorf("entries %q (secrets must never be in a backup)", names)
	}

	dst := newBox(t)
	dst.put(t, "a.json", `{"a":7}`)
	if err := os.Remove(filepath.Join(dst.dir, "b.json")); err != nil {
		t.Fatal(err)
	}
	dst.put(t, "secret.hash", "the other box's secret")
	res, err := Restore(dst.dir, bytes.NewReader(data), dst.files(), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.BoxID != "0b5e9c1e-2b5c-4f1e-9d1e-3c8a5b6f7a8d" || !slices.Equal(res.Restored, []string{"a.json", "b.json"}) || len(res.Removed) != 0 {
		t.Errorf("result %+v", res)
	}
	want := snapshot(t, src.dir)
	want["secret.hash"] = "the other box's secret"
	if got := snapshot(t, dst.dir); !mapsEqual(got, want) {
		t.Errorf("after restore %v\nwant %v", got, want)
	}
	if !slices.Equal(dst.applied, []string{"a.json", "b.json"}) {
		t.Errorf("applied %v", dst.applied)
	}

	// A file the archive does not have goes back to its defaults.
	if err := os.Remove(filepath.Join(src.dir, "b.json")); err != nil {
		t.Fatal(err)
	}
	res, err = Restore(dst.dir, bytes.NewReader(archive(t, src, nil)), dst.files(), DefaultLimits())
	if err != nil || !slices.Equal(res.Removed, []string{"b.json"}) {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dst.dir, "b.json")); !os.IsNotExist(err) {
		t.Errorf("b.json still there: %v", err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestBackupWithMedia(t *testing.T) {
	b := newBox(t)
	media := t.TempDir()
	for name, content := range map[string]string{"Serie/Folge 1.mp3": "mp3", "Serie/cover.jpg": "jpg", "Serie/.upload-1.part": "x", ".Trash/y.mp3": "y"} {
		p := filepath.Join(media, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(b.dir, filepath.Join(media, "link")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(media)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	data := archive(t, b, root)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if strings.HasPrefix(f.Name, MediaDir) && f.Method != zip.Store {
			t.Errorf("%s is compressed", f.Name)
		}
	}
	if !slices.Equal(names, []string{"manifest.json", "a.json", "b.json", "media/Serie/Folge 1.mp3", "media/Serie/cover.jpg"}) {
		t.Errorf("entries %q", names)
	}
	res, err := Restore(t.TempDir(), bytes.NewReader(data), b.files(), DefaultLimits())
	if err != nil || res.MediaSkipped != 2 || !res.Manifest.Media {
		t.Errorf("%+v %v", res, err)
	}
}

type entry struct {
	name, content string
	method        uint16
}

func zipOf(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const manifest = `{"format":"storybox-backup","format_version":1,"box_id":"x","files":[]}`

// Every bad archive is refused naming what is wrong, and changes nothing:
// not a file, not a temporary.
func TestBadArchivesChangeNothing(t *testing.T) {
	b := newBox(t)
	before := snapshot(t, b.dir)
	good := entry{name: "a.json", content: `{"a":3}`}
	man := entry{name: "manifest.json", content: manifest}
	bomb := strings.Repeat("\x00", 5<<20)
	damaged := zipOf(t, man, entry{name: "a.json", content: `{"a":3}`})
	damaged[bytes.Index(damaged, []byte(`{"a":3}`))+5] = '4' // CRC no longer matches
	forged := zipOf(t, man, good)
	binary := forged[len(forged)-22:]
	binary[16], binary[17], binary[18], binary[19] = 0xff, 0xff, 0xff, 0xff // directory offset: ZIP64

	for want, data := range map[string][]byte{
		"not a ZIP":                  {'h', 'i'},
		"ZIP archive":                nil,
		`"../a.json"`:                zipOf(t, man, entry{name: "../a.json", content: `{"a":3}`}),
		`"/etc/passwd"`:              zipOf(t, man, entry{name: "/etc/passwd", content: "x"}),
		`"a\\json"`:                  zipOf(t, man, entry{name: `a\json`, content: "x"}),
		`"media/../secret.hash"`:     zipOf(t, man, entry{name: "media/../secret.hash", content: "x"}),
		`"secret.hash"`:              zipOf(t, man, entry{name: "secret.hash", content: "stolen"}),
		`"a.json": appears twice`:    zipOf(t, man, good, good),
		`"b.json": b.json must be`:   zipOf(t, man, good, entry{name: "b.json", content: `{"b":0}`}),
		`"a.json": larger`:           zipOf(t, man, entry{name: "a.json", content: bomb, method: zip.Deflate}),
		`"a.json" is damaged`:        damaged,
		`"manifest.json" is missing`: zipOf(t, good),
		`format 2 is newer`:          zipOf(t, entry{name: "manifest.json", content: `{"format":"storybox-backup","format_version":2}`}, good),
		`not a storybox-backup`:      zipOf(t, entry{name: "manifest.json", content: `{"format":"other","format_version":1}`}, good),
		"ZIP64":                      forged,
		"entries":                    zipOf(t, man, entry{name: "media/1"}, entry{name: "media/2"}, entry{name: "media/3"}),
	} {
		lim := DefaultLimits()
		lim.Entry, lim.Entries = 1<<20, 3
		_, err := Restore(b.dir, bytes.NewReader(data), b.files(), lim)
		if !errors.Is(err, fault.Invalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
		if got := snapshot(t, b.dir); !mapsEqual(got, before) {
			t.Fatalf("%s changed the data directory: %v", want, got)
		}
	}
	lim := DefaultLimits()
	lim.Archive = 100
	_, err := Restore(b.dir, bytes.NewReader(zipOf(t, man, entry{name: "a.json", content: strings.Repeat(" ", 200) + `{"a":3}`})), b.files(), lim)
	if !errors.Is(err, fault.TooLarge) {
		t.Errorf("archive over the limit: %v", err)
	}
	if got := snapshot(t, b.dir); !mapsEqual(got, before) || len(b.applied) != 0 {
		t.Fatalf("a refused restore changed the data directory: %v %v", got, b.applied)
	}
}

// A crash after the journal was written is completed at the next start; a
// crash before it leaves the old files and no temporaries.
func TestRecover(t *testing.T) {
	b := newBox(t)
	before := snapshot(t, b.dir)
	b.put(t, ".restore-a.json-1", `{"a":9}`)
	b.put(t, ".restore-upload-2", "PK")
	if done, err := Recover(b.dir); err != nil || done {
		t.Fatalf("%v %v", done, err)
	}
	if got := snapshot(t, b.dir); !mapsEqual(got, before) {
		t.Errorf("after a crash before the journal: %v", got)
	}

	b.put(t, ".restore-a.json-1", `{"a":9}`)
	b.put(t, journalName, `{"ops":[{"name":"a.json","temp":".restore-a.json-1"},{"name":"b.json"}]}`)
	if done, err := Recover(b.dir); err != nil || !done {
		t.Fatalf("%v %v", done, err)
	}
	want := map[string]string{"a.json": `{"a":9}`, "secret.hash": before["secret.hash"]}
	if got := snapshot(t, b.dir); !mapsEqual(got, want) {
		t.Errorf("after a crash after the journal: %v", got)
	}
	// Half done already: the rename happened, the journal remained.
	b.put(t, journalName, `{"ops":[{"name":"a.json","temp":".restore-a.json-1"},{"name":"b.json"}]}`)
	if done, err := Recover(b.dir); err != nil || !done {
		t.Fatalf("%v %v", done, err)
	}
	if got := snapshot(t, b.dir); !mapsEqual(got, want) {
		t.Errorf("after a crash during the renames: %v", got)
	}
}
