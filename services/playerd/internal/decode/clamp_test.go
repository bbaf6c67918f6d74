package decode

import (
	"math"
	"testing"

	"github.com/gopxl/beep/v2"
)

// fixedStreamer is a decoder that produces the given values, then ends.
type fixedStreamer struct {
	vals []float64
	pos  int
}

func (f *fixedStreamer) Stream(samples [][2]float64) (int, bool) {
	n := 0
	for n < len(samples) && f.pos < len(f.vals) {
		samples[n] = [2]float64{f.vals[f.pos], -f.vals[f.pos]}
		n++
		f.pos++
	}
	return n, f.pos < len(f.vals)
}
func (f *fixedStreamer) Err() error       { return nil }
func (f *fixedStreamer) Len() int         { return len(f.vals) }
func (f *fixedStreamer) Position() int    { return f.pos }
func (f *fixedStreamer) Seek(p int) error { f.pos = p; return nil }
func (f *fixedStreamer) Close() error     { return nil }

var _ beep.StreamSeekCloser = (*fixedStreamer)(nil)

// The fuzz targets' check of the decoders' raw output (checkRaw) fails on
// what the guard hid: values that are no number, and values far beyond
// full scale; it lets ordinary overshoot pass. The speaker still gets only
// samples within full scale.
func TestRawCheckSeesWhatTheGuardClamped(t *testing.T) {
	for _, c := range []struct {
		name string
		vals []float64
		bad  bool
	}{
		{"within full scale", []float64{0, 0.5, -1, 1}, false},
		{"overshoot", []float64{0.9, 1.4, -3, 1e6}, false},
		{"NaN", []float64{0.1, math.NaN(), 0.2}, true},
		{"+Inf", []float64{math.Inf(1)}, true},
		{"-Inf", []float64{0.3, math.Inf(-1)}, true},
		{"4.5e15", []float64{0.2, 4.5e15, 0.1}, true},
		{"just beyond the bound", []float64{-rawBound * 1.01}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &guarded{s: &fixedStreamer{vals: c.vals}, src: memSource(nil), length: len(c.vals)}
			buf := make([][2]float64, 2)
			for {
				n, ok := g.Stream(buf)
				for _, s := range buf[:n] {
					if !(s[0] >= -1 && s[0] <= 1 && s[1] >= -1 && s[1] <= 1) {
						t.Fatalf("sample %v reached the player", s)
					}
				}
				if !ok {
					break
				}
			}
			err := checkRaw(g.clamped)
			if (err != nil) != c.bad {
				t.Errorf("checkRaw: %v, clamps %+v", err, g.clamped)
			}
		})
	}
}

// BenchmarkSanitize is the boundary's check of every sample played, on
// audio within full scale (the usual case).
func BenchmarkSanitize(b *testing.B) {
	buf := make([][2]float64, 1024)
	for i := range buf {
		v := math.Sin(float64(i) / 10)
		buf[i] = [2]float64{v, -v / 2}
	}
	var c clamps
	b.SetBytes(int64(len(buf)) * 16)
	for b.Loop() {
		c.sanitize(buf)
	}
	if c != (clamps{}) {
		b.Fatalf("clamped %+v", c)
	}
}
