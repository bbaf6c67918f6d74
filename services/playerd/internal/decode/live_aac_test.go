package decode

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/decode/aac"
	"github.com/storybox/storybox/services/playerd/internal/decode/aac/aactest"
)

// A station's ADTS stream plays, joined mid-frame, whatever the server
// calls it; it plays the same samples as the file.
func TestLiveADTS(t *testing.T) {
	data := fixture(t, "tone.aac")
	file, _, err := Open(filepath.Join("testdata", "tone.aac"))
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, file)
	for _, tc := range []struct {
		name, contentType string
		from              int
	}{{"aacp", "audio/aacp", 0}, {"no type", "", 0}, {"joined mid-frame", "audio/aac", 100}, {"joined mid-frame, no type", "", 100}} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := OpenLive(stream{bytes.NewReader(data[tc.from:])}, tc.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if l.Format().SampleRate != 44100 || l.Notice() != "" {
				t.Errorf("format %+v, notice %q", l.Format(), l.Notice())
			}
			got := readAll(t, l)
			if tc.from == 0 {
				if len(got) != len(want) || math.Abs(got[5000][0]-want[5000][0]) > 1e-6 {
					t.Errorf("%d samples, file %d", len(got), len(want))
				}
				return
			}
			// Joined in the first frame: it starts with the second.
			if len(got) != len(want)-1024 || math.Abs(got[5000][1]-want[5000+1024][1]) > 1e-3 {
				t.Errorf("%d samples, file %d", len(got), len(want))
			}
		})
	}
}

// A podcast episode in M4A streams when its index comes first; one with the
// index at the end is refused with a clear error.
func TestLiveM4A(t *testing.T) {
	ff := aactest.FFmpeg(t)
	dir := t.TempDir()
	fast := filepath.Join(dir, "fast.m4a")
	aactest.Run(t, ff, "-i", filepath.Join("testdata", "tone.m4a"), "-c", "copy", "-movflags", "+faststart", fast)
	file, _, err := Open(fast)
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, file)
	l, err := OpenLive(stream{bytes.NewReader(readFile(t, fast))}, "audio/mp4")
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, l)
	if len(got) != len(want) || math.Abs(got[7000][0]-want[7000][0]) > 1e-6 {
		t.Errorf("%d samples, file %d", len(got), len(want))
	}
	_, err = OpenLive(stream{bytes.NewReader(fixture(t, "tone.m4a"))}, "audio/mp4")
	if !errors.Is(err, fault.Unsupported) || !strings.Contains(err.Error(), "index after the audio") {
		t.Errorf("moov at the end: %v", err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// An HE-AAC station says nothing of SBR in its ADTS headers: the stream
// finds SBR data in the frames' fill elements and says so (Notice), and
// plays the core.
func TestLiveHEAACNotice(t *testing.T) {
	data := fixture(t, "tone.aac")
	var he []byte
	for off := 0; off+7 <= len(data); {
		h, err := aac.ParseADTS(data[off:])
		if err != nil {
			t.Fatal(err)
		}
		raw := withSBRFill(data[off+h.HeaderLength : off+h.FrameLength])
		he = append(append(he, adtsHeader(data[off:off+7], len(raw))...), raw...)
		off += h.FrameLength
	}
	l, err := OpenLive(stream{bytes.NewReader(he)}, "audio/aacp")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, l); len(got) < 80000 {
		t.Errorf("%d samples", len(got))
	}
	if !strings.Contains(l.Notice(), "HE-AAC: plays its AAC-LC core at 44100 Hz") {
		t.Errorf("notice %q", l.Notice())
	}
}

// withSBRFill puts a fill element with one byte of SBR data (extension
// type 13) before a raw data block's elements.
func withSBRFill(raw []byte) []byte {
	const prefix, bits = 0b110_0001_1101_0000, 15
	out := make([]byte, len(raw)+2)
	acc, n, j := uint32(prefix), bits, 0
	for _, b := range raw {
		acc = acc<<8 | uint32(b)
		n += 8
		for n >= 8 {
			out[j] = byte(acc >> (n - 8))
			j++
			n -= 8
		}
	}
	if n > 0 {
		out[j] = byte(acc << (8 - n))
		j++
	}
	return out[:j]
}

// adtsHeader is a copy of a 7-byte ADTS header for a raw block of n bytes.
func adtsHeader(h []byte, n int) []byte {
	head := append([]byte(nil), h[:7]...)
	head[1] |= 1 // no CRC
	n += 7
	head[3] = head[3]&^3 | byte(n>>11)
	head[4] = byte(n >> 3)
	head[5] = head[5]&0x1f | byte(n&7)<<5
	return head
}
