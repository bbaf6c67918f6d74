package output

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
)

// TestEncodeStereo: the stereo paths for 32- and 16-bit devices write the
// bytes the general encoder writes, appended to what the buffer held,
// full scale, beyond it and the infinities included.
func TestEncodeStereo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	frames := [][2]float64{{0, 0}, {1, -1}, {1.5, -1.5}, {0.5, -0.25}, {1.0 / 3, -1.0 / 3}, {math.Inf(1), math.Inf(-1)}, {1e-9, -1e-9}}
	for range 1000 {
		frames = append(frames, [2]float64{rng.Float64()*2 - 1, rng.Float64()*2.2 - 1.1})
	}
	for _, f := range []alsa.Format{alsa.S32LE, alsa.S16LE} {
		head := []byte{1, 2, 3}
		got := encode(bytes.Clone(head), f, 2, frames)
		want := encodeAny(bytes.Clone(head), f, 2, frames)
		if !bytes.Equal(got, want) {
			t.Errorf("format %v: stereo encoding differs from the general one", f)
		}
	}
}

// BenchmarkEncode is a period's conversion for a stereo 32-bit device.
func BenchmarkEncode(b *testing.B) {
	frames := make([][2]float64, PeriodFrames)
	for i := range frames {
		v := math.Sin(float64(i) / 7)
		frames[i] = [2]float64{v * 0.3, -v * 0.2}
	}
	var buf []byte
	for _, c := range []struct {
		name string
		enc  func([]byte, alsa.Format, int, [][2]float64) []byte
	}{{"stereo", encode}, {"general", encodeAny}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				buf = c.enc(buf[:0], alsa.S32LE, 2, frames)
			}
		})
	}
}
