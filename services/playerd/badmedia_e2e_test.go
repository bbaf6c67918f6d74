package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// seedDir holds small real files of every format (decode's fuzzing seeds).
const seedDir = "internal/decode/testdata/seed"

// Done-when of the bad-media item: a library holding damaged files of every
// format (truncated, lying headers, random bytes after a valid header, tags
// with absurd sizes) scans and serves, the good files are all listed, the
// unplayable ones are reported, and playing files that went bad after the
// scan skips them with errors. No panic escapes: one would end the test
// binary.
func TestDamagedMediaNeverTakesTheBoxDown(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	var good []string
	for _, name := range []string{"tone.wav", "tone.mp3", "tone.flac", "tone.ogg", "tone.opus"} {
		seed, err := os.ReadFile(filepath.Join(seedDir, name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(media, "Gut", name), seed)
		good = append(good, name)
		for kind, bad := range damage(name, seed) {
			write(t, filepath.Join(media, "Kaputt", kind+"-"+name), bad)
		}
	}
	must(t, testmedia.Library(media, map[string][]float64{"Später kaputt": {1, 1}, "Eins kaputt": {1, 1}}))

	var logs logTap
	base, stop := startBoxWith(t, media, data, func(c *setup) { c.log = &logs })
	defer stop()

	// Every good file of every format is listed.
	lib := getJSON[[]struct {
		ID       string `json:"id"`
		Relative string `json:"relative"`
		Tracks   []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"tracks"`
	}](t, base+"/api/library")
	folders := map[string]string{}
	var listed []string
	trackIDs := map[string]bool{}
	for _, f := range lib {
		folders[f.Relative] = f.ID
		for _, tr := range f.Tracks {
			listed = append(listed, f.Relative+"/"+tr.Title)
			trackIDs[tr.ID] = true
		}
	}
	if n := countPrefix(listed, "Gut/"); n != len(good) {
		t.Errorf("%d good tracks listed, want %d: %q", n, len(good), listed)
	}

	// The unplayable files are reported with their error; the ones that
	// still decode (a truncated MP3 plays its first half) are listed.
	info := getJSON[struct {
		Library struct {
			Scanned  bool `json:"scanned"`
			Problems []struct{ Path, Error string }
		} `json:"library"`
	}](t, base+"/api/info")
	var reported []string
	for _, p := range info.Library.Problems {
		reported = append(reported, p.Path)
		if p.Error == "" {
			t.Errorf("problem without error: %+v", p)
		}
	}
	for _, want := range []string{"Kaputt/lying-tone.wav", "Kaputt/lying-tone.flac", "Kaputt/header-only-tone.ogg", "Kaputt/header-only-tone.opus"} {
		if !slices.Contains(reported, want) {
			t.Errorf("%s is not reported: %q", want, reported)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(media, "Kaputt"))
	for _, e := range entries {
		rel := "Kaputt/" + e.Name()
		if !trackIDs[library.ID(rel)] && !slices.Contains(reported, rel) {
			t.Errorf("%s is neither listed nor reported", rel)
		}
	}

	// Files that go bad after the scan (an upload replacing them): playing
	// skips them with an error; when nothing plays, the player is in error.
	lying := lyingWAV()
	write(t, filepath.Join(media, "Später kaputt", "Folge 1.wav"), lying)
	write(t, filepath.Join(media, "Später kaputt", "Folge 2.wav"), append(lying[:12:12], bytes.Repeat([]byte{0xA5}, 4000)...))
	write(t, filepath.Join(media, "Eins kaputt", "Folge 1.wav"), lying)

	st := post(t, base, `{"action":"folder","folder_id":"`+folders["Eins kaputt"]+`"}`)
	if st["state"] != "playing" || st["index"] != 1.0 {
		t.Errorf("a folder with one bad track: want the next one playing, got %v", st)
	}
	resp, err := http.Post(base+"/api/command", "application/json",
		strings.NewReader(`{"action":"folder","folder_id":"`+folders["Später kaputt"]+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var refusal map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&refusal)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("a folder of bad tracks: %d %v, want 409", resp.StatusCode, refusal)
	}
	st = getJSON[map[string]any](t, base+"/api/status")
	if st["state"] != "error" || !strings.Contains(st["error"].(string), "can be played") {
		t.Errorf("status after a folder of bad tracks: %v", st)
	}
	if n := logs.count("track skipped"); n < 3 {
		t.Errorf("%d skips logged, want one per bad track (3):\n%s", n, logs.String())
	}
	// The box still serves.
	getJSON[map[string]any](t, base+"/api/health")
}

// lyingWAV is the 51-byte file of the issue: its fmt chunk says 0 bytes, so
// an unchecked reader takes sample data for the next chunk's size.
func lyingWAV() []byte {
	b := []byte("RIFF\x2b\x00\x00\x00WAVEfmt \x00\x00\x00\x00")
	b = append(b, 1, 0, 2, 0, 0x44, 0xac, 0, 0, 0x10, 0xb1, 2, 0, 4, 0, 16, 0)
	b = append(b, "LIST\xfe\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00"...)
	return b[:51]
}

// damage returns broken variants of a good file, by kind.
func damage(name string, good []byte) map[string][]byte {
	rnd := func(n int) []byte {
		b := make([]byte, n)
		x := uint32(2463534242)
		for i := range b {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[i] = byte(x)
		}
		return b
	}
	out := map[string][]byte{
		"truncated":     good[:len(good)/2],
		"header-only":   good[:min(len(good), 58)],
		"random-after":  append(bytes.Clone(good[:min(len(good), 120)]), rnd(4000)...),
		"random":        rnd(3000),
		"absurd-sizes":  absurd(name, good),
		"zero-length":   {},
		"lying-headers": lieAboutSizes(good),
	}
	if name == "tone.wav" {
		out["lying"] = lyingWAV()
	}
	if name == "tone.flac" {
		// STREAMINFO claims 2^24-1 bytes.
		b := bytes.Clone(good)
		copy(b[5:8], []byte{0xff, 0xff, 0xff})
		out["lying"] = b
	}
	return out
}

// lieAboutSizes overwrites every 32-bit field that holds the file's size or
// a chunk's with nearly 2^31.
func lieAboutSizes(b []byte) []byte {
	b = bytes.Clone(b)
	for _, at := range []int{4, 16, 40} {
		if at+4 <= len(b) {
			binary.LittleEndian.PutUint32(b[at:], 0x7ffffff0)
		}
	}
	return b
}

// absurd gives a file's tags sizes it does not have: an ID3v2 tag of
// 256 MB, a FLAC picture of 4 GB, a Vorbis comment count of 2^32-1 (with
// the page checksums made right, so only the sizes are wrong).
func absurd(name string, good []byte) []byte {
	b := bytes.Clone(good)
	switch name {
	case "tone.mp3":
		copy(b[6:10], []byte{0x7f, 0x7f, 0x7f, 0x7f})
	case "tone.flac":
		if i := bytes.Index(b, []byte("image/png")); i > 0 {
			// type, mime length, mime, description length, 16 bytes, data length
			j := i + len("image/png")
			d := int(binary.BigEndian.Uint32(b[j:]))
			binary.BigEndian.PutUint32(b[j+4+d+16:], 0xfffffff0)
		}
	case "tone.ogg", "tone.opus":
		for _, p := range [][]byte{[]byte("\x03vorbis"), []byte("OpusTags")} {
			if i := bytes.Index(b, p); i > 0 {
				j := i + len(p)
				vendor := int(binary.LittleEndian.Uint32(b[j:]))
				binary.LittleEndian.PutUint32(b[j+4+vendor:], 0xffffffff)
			}
		}
		fixOggCRC(b)
	case "tone.wav":
		b = append(b, "LIST\xf0\xff\xff\x7f"...)
	}
	return b
}

// fixOggCRC recomputes the checksum of every page.
func fixOggCRC(b []byte) {
	var table [256]uint32
	for i := range table {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		table[i] = r
	}
	for off := 0; off+27 <= len(b) && string(b[off:off+4]) == "OggS"; {
		n := 27 + int(b[off+26])
		if off+n > len(b) {
			return
		}
		for _, s := range b[off+27 : off+n] {
			n += int(s)
		}
		if off+n > len(b) {
			return
		}
		page := b[off : off+n]
		clear(page[22:26])
		var crc uint32
		for _, c := range page {
			crc = crc<<8 ^ table[byte(crc>>24)^c]
		}
		binary.LittleEndian.PutUint32(page[22:], crc)
		off += n
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, data, 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}
