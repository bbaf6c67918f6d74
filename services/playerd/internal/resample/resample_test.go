package resample

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gopxl/beep/v2"
)

type frames struct{ f [][2]float64 }

func (s *frames) Stream(out [][2]float64) (int, bool) {
	n := copy(out, s.f)
	s.f = s.f[n:]
	return n, n > 0
}

func (s *frames) Err() error { return nil }

func noise(n int) [][2]float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	f := make([][2]float64, n)
	for i := range f {
		f[i] = [2]float64{rng.Float64()*2 - 1, rng.Float64()*2 - 1}
	}
	return f
}

func drain(s beep.Streamer, chunk int) [][2]float64 {
	var out [][2]float64
	buf := make([][2]float64, chunk)
	for {
		n, ok := s.Stream(buf)
		out = append(out, buf[:n]...)
		if !ok {
			return out
		}
	}
}

// TestMatchesBeep: the same frames as beep.Resample, up to rounding, for
// the rates a box meets, short sources (the window clipped at both ends) and
// odd read sizes.
func TestMatchesBeep(t *testing.T) {
	for _, c := range []struct {
		q, from, to, n, chunk int
	}{
		{4, 44100, 48000, 44100, 480},
		{4, 22050, 48000, 10000, 1000},
		{4, 48000, 44100, 20000, 333},
		{4, 96000, 48000, 9000, 512},
		{4, 16000, 48000, 3, 7},
		{4, 44100, 48000, 513, 1},
		{1, 44100, 48000, 5000, 480},
		{6, 8000, 48000, 4000, 97},
	} {
		src := noise(c.n)
		want := drain(beep.Resample(c.q, beep.SampleRate(c.from), beep.SampleRate(c.to), &frames{append([][2]float64(nil), src...)}), c.chunk)
		got := drain(New(c.q, beep.SampleRate(c.from), beep.SampleRate(c.to), &frames{append([][2]float64(nil), src...)}), c.chunk)
		if len(got) != len(want) {
			t.Fatalf("%+v: %d frames, beep %d", c, len(got), len(want))
		}
		for i := range got {
			for ch := range 2 {
				if d := math.Abs(got[i][ch] - want[i][ch]); d > 1e-9 {
					t.Fatalf("%+v: frame %d channel %d: %v, beep %v", c, i, ch, got[i][ch], want[i][ch])
				}
			}
		}
	}
}

// TestSameRateIsExact: at ratio 1 every output frame is its source frame,
// bit for bit.
func TestSameRateIsExact(t *testing.T) {
	src := noise(2000)
	got := drain(New(4, 48000, 48000, &frames{append([][2]float64(nil), src...)}), 480)
	if len(got) != len(src) {
		t.Fatalf("%d frames, want %d", len(got), len(src))
	}
	for i := range got {
		if got[i] != src[i] {
			t.Fatalf("frame %d: %v, want %v", i, got[i], src[i])
		}
	}
}

func bench(b *testing.B, s func(beep.Streamer) beep.Streamer) {
	src := noise(44100)
	buf := make([][2]float64, 480)
	b.SetBytes(0)
	for b.Loop() {
		st := s(&frames{src})
		for {
			if _, ok := st.Stream(buf); !ok {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/audio-s")
}

// BenchmarkResample: one second of 44.1 kHz stereo to 48 kHz.
func BenchmarkResample(b *testing.B) {
	bench(b, func(s beep.Streamer) beep.Streamer { return New(4, 44100, 48000, s) })
}

func BenchmarkBeepResample(b *testing.B) {
	bench(b, func(s beep.Streamer) beep.Streamer { return beep.Resample(4, 44100, 48000, s) })
}
