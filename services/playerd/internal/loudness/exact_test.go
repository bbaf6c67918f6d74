package loudness

import (
	"math"
	"math/rand/v2"
	"testing"
)

// stretches is stereo noise in stretches of changing level, with digital
// silence between some, so that the true peak's skip tests both skip and
// interpolate, and the filters' memory is flushed.
func stretches(rate, seconds int) [][2]float64 {
	r := rand.New(rand.NewPCG(7, 11))
	x := make([][2]float64, rate*seconds)
	level := 0.1
	for i := range x {
		if i%(rate/3) == 0 {
			level = []float64{0, 0.02, 0.1, 0.3, 0.05}[r.IntN(5)]
		}
		v := r.NormFloat64() * level
		x[i] = [2]float64{v, 0.7*v + 0.3*level*r.NormFloat64()}
	}
	return x
}

// TestStereoWriteIsExact holds Write's fused stereo path to the general
// one of WriteInterleaved, to the bit, for chunks of every awkward size.
func TestStereoWriteIsExact(t *testing.T) {
	for _, rate := range []int{44100, 48000, 22050, 11025} {
		x := stretches(rate, 8)
		a, _ := NewMeter(rate, 2)
		b, _ := NewMeter(rate, 2)
		inter := make([]float64, 0, 2*len(x))
		for _, s := range x {
			inter = append(inter, s[0], s[1])
		}
		r := rand.New(rand.NewPCG(3, uint64(rate)))
		for i := 0; i < len(x); {
			n := min(len(x)-i, 1+r.IntN(9000))
			a.Write(x[i : i+n])
			b.WriteInterleaved(inter[2*i : 2*(i+n)])
			i += n
			if a.Momentary() != b.Momentary() || a.ShortTerm() != b.ShortTerm() {
				t.Fatalf("%d Hz at %d: momentary %v/%v, short-term %v/%v", rate, i, a.Momentary(), b.Momentary(), a.ShortTerm(), b.ShortTerm())
			}
		}
		ra, rb := a.Result(), b.Result()
		if ra.Integrated != rb.Integrated || ra.Range != rb.Range || ra.TruePeak != rb.TruePeak ||
			ra.Histogram.Count() != rb.Histogram.Count() || a.peak.peak != b.peak.peak {
			t.Errorf("%d Hz: Write %+v, WriteInterleaved %+v", rate, ra, rb)
		}
		for i := range a.blocks {
			if a.blocks[i] != b.blocks[i] || a.blockSums[i] != b.blockSums[i] || a.short[i] != b.short[i] {
				t.Fatalf("%d Hz: bin %d differs", rate, i)
			}
		}
	}
}

// TestTruePeakSkipsExactly holds the true peak, with all its skipping, to
// the plain maximum over every sample and every interpolated value of
// every window, to the bit.
func TestTruePeakSkipsExactly(t *testing.T) {
	const rate = 44100
	for name, x := range map[string][][2]float64{"noise": stretches(rate, 6), "low": lowNoise(rate, 6), "tones": tones(rate, 3)} {
		t.Run(name, func(t *testing.T) { peakSkipsExactly(t, rate, x) })
	}
}

// lowNoise is noise through a one-pole low-pass at about 100 Hz, whose
// neighbouring samples are close: the case the interval bound skips.
func lowNoise(rate, seconds int) [][2]float64 {
	r := rand.New(rand.NewPCG(13, 17))
	x := make([][2]float64, rate*seconds)
	var a, b float64
	for i := range x {
		a += 0.015 * (r.NormFloat64() - a)
		b += 0.015 * (r.NormFloat64() - b)
		x[i] = [2]float64{4 * a, 4 * (0.5*a + 0.5*b)}
	}
	return x
}

// tones are sines at a quarter and a sixth of the rate whose samples miss
// their crests (as Tech 3341's true-peak cases), at levels that fall and
// rise, so the true peak lies between samples and moves on.
func tones(rate, seconds int) [][2]float64 {
	x := make([][2]float64, rate*seconds)
	for i := range x {
		g := []float64{0.5, 0.3, 0.6, 0.2, 0.8}[i*5/len(x)]
		ph := float64(i)
		x[i] = [2]float64{g * math.Sin(2*math.Pi*ph/4+math.Pi/4), g * math.Sin(2*math.Pi*ph/6+math.Pi/6)}
	}
	return x
}

func peakSkipsExactly(t *testing.T, rate int, x [][2]float64) {
	m, _ := NewMeter(rate, 2)
	r := rand.New(rand.NewPCG(5, 9))
	for i := 0; i < len(x); {
		n := min(len(x)-i, 1+r.IntN(5000))
		m.Write(x[i : i+n])
		i += n
	}
	var want float64
	for c := range 2 {
		buf := make([]float64, tpTaps-1, tpTaps-1+len(x)) // the meter starts from silence
		for _, s := range x {
			buf = append(buf, s[c])
			want = max(want, math.Abs(s[c]))
		}
		for i := 0; i+tpTaps <= len(buf); i++ {
			for p := 1; p < tpFactor; p++ {
				var y float64
				for j := range tpTaps {
					y += tpTapsRev[p][j] * buf[i+j]
				}
				want = max(want, math.Abs(y))
			}
		}
	}
	if m.peak.peak != want {
		t.Errorf("true peak %v, every window %v", m.peak.peak, want)
	}
}
