package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// walked is the duration as the player sees it: the decoder opened (for an
// MP3 without a header and of variable bitrate, every frame walked).
func walked(t *testing.T, path string) float64 {
	t.Helper()
	d, format, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	return float64(d.Len()) / float64(format.SampleRate)
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mp3Variants are MP3 files whose duration comes from each of the ways
// Duration has, with the way they should take.
func mp3Variants(t *testing.T) map[string]struct {
	data []byte
	way  string
} {
	cbr := readFixture(t, "tone.mp3") // 128 kbit/s, ID3v2 and ID3v1, LAME Info header
	vbr := readFixture(t, "tone-vbr.mp3")
	tag := func(b []byte) int { return int(b[6])<<21 | int(b[7])<<14 | int(b[8])<<7 | int(b[9]) + 10 }
	// The header sits after the side information: 4 + 32 bytes into the
	// first frame of these (MPEG-1 stereo) files.
	at := func(b []byte, s string) int {
		i := bytes.Index(b[tag(b):], []byte(s))
		if i != 36 {
			t.Fatalf("%s at %d of the first frame", s, i)
		}
		return tag(b) + i
	}
	blank := func(b []byte, s string) []byte {
		b = bytes.Clone(b)
		copy(b[at(b, s):], "XXXX")
		return b
	}
	// A Fraunhofer VBRI header in place of LAME's: frame count excluding
	// the header frame, stream bytes from the first frame on.
	vbri := bytes.Clone(cbr)
	i := at(vbri, "Info")
	frames := binary.BigEndian.Uint32(vbri[i+8:])
	clear(vbri[i : i+120])
	copy(vbri[i:], "VBRI\x00\x01\x04\x40\x00\x4b")
	binary.BigEndian.PutUint32(vbri[i+10:], uint32(len(vbri)-tag(vbri)-128))
	binary.BigEndian.PutUint32(vbri[i+14:], frames)
	return map[string]struct {
		data []byte
		way  string
	}{
		"cbr-info.mp3":          {cbr, "header"},
		"vbr-xing.mp3":          {vbr, "header"},
		"vbri.mp3":              {vbri, "header"},
		"cbr-no-header.mp3":     {blank(cbr, "Info"), "size"},
		"vbr-no-header.mp3":     {blank(vbr, "Xing"), "walk"},
		"no-id3v2.mp3":          {cbr[tag(cbr):], "header"},
		"no-id3v1.mp3":          {cbr[:len(cbr)-128], "header"},
		"truncated-info.mp3":    {cbr[:len(cbr)*2/3], "size"},
		"truncated-xing.mp3":    {vbr[:len(vbr)*2/3], "walk"},
		"appended-to.mp3":       {append(bytes.Clone(cbr[:len(cbr)-128]), cbr[tag(cbr):]...), "size"},
		"cbr-no-header-cut.mp3": {blank(cbr, "Info")[:len(cbr)-1000], "size"},
	}
}

// The duration read from the headers is the player's, to the sample, for
// CBR and VBR files, with and without tags; a header whose byte count the
// file contradicts is not trusted (a constant bitrate is then counted
// from the size, a variable one walked).
func TestMP3DurationIsTheWalks(t *testing.T) {
	dir := t.TempDir()
	for name, v := range mp3Variants(t) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, v.data, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := openSource(path)
		if err != nil {
			t.Fatal(err)
		}
		src.budget(openBudget(src.size))
		_, fromHeader, err := mp3Duration(src)
		src.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fromHeader != (v.way != "walk") {
			t.Errorf("%s: from the headers %v, want the %s", name, fromHeader, v.way)
		}
		got, err := Duration(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := walked(t, path); got != want {
			t.Errorf("%s: %.6f s, the walk says %.6f s", name, got, want)
		}
	}
}

func TestDurationOfEveryFormat(t *testing.T) {
	for _, name := range []string{"tone.mp3", "tone-vbr.mp3", "tone.flac", "tone.ogg", "tone.opus", "tone48k.wav",
		"seed/tone.mp3", "seed/tone-notag.mp3", "seed/tone.flac", "seed/tone.ogg", "seed/tone.wav"} {
		path := filepath.Join("testdata", name)
		got, err := Duration(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want := walked(t, path); got != want {
			t.Errorf("%s: %.6f s, opened %.6f s", name, got, want)
		}
	}
}

// Headers that lie or stop short are errors, as when the file is opened.
func TestDurationRefusesDamagedHeaders(t *testing.T) {
	dir := t.TempDir()
	flac := readFixture(t, "tone.flac")
	ogg := readFixture(t, "tone.ogg")
	lying := bytes.Clone(flac)
	copy(lying[5:8], []byte{0xff, 0xff, 0xff}) // STREAMINFO of 16 MB
	noFrames := bytes.Clone(flac)
	noFrames = noFrames[:bytes.Index(noFrames, []byte{0xff, 0xf8})]
	hugeTag := bytes.Clone(readFixture(t, "tone.mp3"))
	copy(hugeTag[6:10], []byte{0x7f, 0x7f, 0x7f, 0x7f})
	for name, b := range map[string][]byte{
		"lying.flac":       lying,
		"header-only.flac": flac[:60],
		"no-frames.flac":   noFrames,
		"header-only.ogg":  ogg[:58],
		"headers-cut.ogg":  ogg[:200],
		"huge-id3.mp3":     hugeTag,
		"text.mp3":         []byte("no audio here at all"),
		"empty.flac":       nil,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if d, err := Duration(path); err == nil {
			t.Errorf("%s: %v s, want an error", name, d)
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrCorrupt or ErrUnsupported", name, err)
		}
	}
}
