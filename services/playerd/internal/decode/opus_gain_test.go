package decode

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopxl/beep/v2"
)

// withOutputGain sets the output gain of an Ogg Opus file's ID header to q
// (Q7.8 dB) and fixes the page checksums.
func withOutputGain(b []byte, q int16) []byte {
	b = bytes.Clone(b)
	i := bytes.Index(b, []byte("OpusHead"))
	binary.LittleEndian.PutUint16(b[i+16:], uint16(q))
	fixCRC(b)
	return b
}

func rms(frames [][2]float64) float64 {
	var sum float64
	for _, f := range frames {
		sum += f[0]*f[0] + f[1]*f[1]
	}
	return math.Sqrt(sum / float64(2*len(frames)))
}

// RFC 7845 §5.1: a player applies the ID header's output gain. −6.02 dB
// (Q7.8: −1541) halves every sample, +3 dB raises them by √2; files and
// streams alike.
func TestOpusOutputGainIsApplied(t *testing.T) {
	plain := fixture(t, "tone.opus")
	dir := t.TempDir()
	open := map[string]func(t *testing.T, data []byte) beep.Streamer{
		"file": func(t *testing.T, data []byte) beep.Streamer {
			p := filepath.Join(dir, "x.opus")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			s, _, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"live": func(t *testing.T, data []byte) beep.Streamer {
			l, err := OpenLive(stream{bytes.NewReader(data)}, "audio/ogg")
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
	}
	for how, openIt := range open {
		t.Run(how, func(t *testing.T) {
			ref := rms(readAll(t, openIt(t, plain)))
			for q, want := range map[int16]float64{-1541: -6.02, 768: 3} {
				got := 20 * math.Log10(rms(readAll(t, openIt(t, withOutputGain(plain, q))))/ref)
				if math.Abs(got-want) > 0.01 {
					t.Errorf("output gain %d/256 dB: level moved %.3f dB, want %.2f", q, got, want)
				}
			}
		})
	}
}
