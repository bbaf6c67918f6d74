package decode

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// flacOf encodes frames of a ramp per channel (channel c at value
// (i*7+c*1000)%20000-10000) with Debian's flac.
func flacOf(t *testing.T, channels, frames int) []byte {
	t.Helper()
	if _, err := exec.LookPath("flac"); err != nil {
		if os.Getenv("CI") != "" || os.Getenv("STORYBOX_REQUIRE_FLAC") != "" {
			t.Fatal("flac is required: apt-get install flac")
		}
		t.Skip("flac not installed")
	}
	raw := make([]byte, 0, frames*channels*2)
	for i := range frames {
		for c := range channels {
			raw = binary.LittleEndian.AppendUint16(raw, uint16(int16(rampValue(i, c))))
		}
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.raw"), filepath.Join(dir, "x.flac")
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("flac", "-s", "-f", "--force-raw-format", "--endian=little", "--sign=signed",
		"--channels="+strconv.Itoa(channels), "--bps=16", "--sample-rate=44100", "-o", out, in)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("flac: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rampValue(i, c int) int { return (i*7+c*1000)%20000 - 10000 }

// TestFLACChannels: mono plays on both sides, and of more channels the
// first pair, at 16 bits' scale; the position counts what was handed out,
// and a seek lands on its sample.
func TestFLACChannels(t *testing.T) {
	for _, channels := range []int{1, 2, 6} {
		t.Run(strconv.Itoa(channels), func(t *testing.T) {
			const frames = 30000
			g, format, err := open(memSource(flacOf(t, channels, frames)))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if format.NumChannels != min(channels, 2) || g.Len() != frames {
				t.Fatalf("format %+v, length %d", format, g.Len())
			}
			want := func(i int) [2]float64 {
				r := 0
				if channels > 1 {
					r = 1
				}
				return [2]float64{float64(rampValue(i, 0)) / 32768, float64(rampValue(i, r)) / 32768}
			}
			buf := make([][2]float64, 1000)
			for _, seek := range []int{-1, 12345, 0, frames - 10} {
				start := 0
				if seek >= 0 {
					if err := g.Seek(seek); err != nil {
						t.Fatal(err)
					}
					start = seek
				}
				n, _ := g.Stream(buf)
				for i := range n {
					if buf[i] != want(start+i) {
						t.Fatalf("sample %d: %v, want %v", start+i, buf[i], want(start+i))
					}
				}
				if g.Position() != start+n || n != min(len(buf), frames-start) {
					t.Fatalf("%d samples from %d, position %d", n, start, g.Position())
				}
			}
		})
	}
}
