package resample

import (
	"math"
	"testing"
)

// fit is the amplitude of a sine of frequency f (cycles per sample) in x,
// and the RMS of what is left once that sine is taken out: the tone the
// resampler should give, and the error (aliasing, imaging, interpolation
// noise) it adds.
func fit(x []float64, f float64) (amp, rest float64) {
	// Least squares of x against sin and cos: the two are not orthogonal
	// over a window of a fractional number of cycles.
	var xs, xc, sin2, cos2, sincos float64
	for i, v := range x {
		s, c := math.Sincos(2 * math.Pi * f * float64(i))
		xs += v * s
		xc += v * c
		sin2 += s * s
		cos2 += c * c
		sincos += s * c
	}
	det := sin2*cos2 - sincos*sincos
	a := (xs*cos2 - xc*sincos) / det
	b := (xc*sin2 - xs*sincos) / det
	var sq float64
	for i, v := range x {
		s, c := math.Sincos(2 * math.Pi * f * float64(i))
		r := v - a*s - b*c
		sq += r * r
	}
	return math.Hypot(a, b), math.Sqrt(sq / float64(len(x)))
}

// TestQualityAt44100To48000 measures what the player's resampler (quality
// 4, as the player uses it) does to pure tones from 44.1 to 48 kHz: the
// level it keeps (passband) and the error beside the tone (aliases, images,
// interpolation noise), in dB below the tone. The figures are logged
// (go test -v -run Quality ./services/playerd/internal/resample/) and stated
// in docs/performance.md; the bounds fail only on a broken resampler.
func TestQualityAt44100To48000(t *testing.T) {
	const from, to, amp = 44100, 48000, 0.5
	for _, c := range []struct {
		hz         float64
		maxLossDB  float64 // passband: at most this much quieter
		minCleanDB float64 // error at least this far below the tone
	}{
		{100, 0.01, 90}, {1000, 0.01, 80}, {5000, 0.1, 50}, {10000, 0.5, 35}, {15000, 2, 20}, {20000, 6, 5},
	} {
		src := make([][2]float64, from)
		for i := range src {
			v := amp * math.Sin(2*math.Pi*c.hz*float64(i)/from)
			src[i] = [2]float64{v, v}
		}
		out := drain(New(4, from, to, &frames{src}), 512)
		x := make([]float64, 0, len(out))
		for _, f := range out[1000 : len(out)-1000] { // away from the ends' clipped windows
			x = append(x, f[0])
		}
		got, rest := fit(x, c.hz/to)
		lossDB := -20 * math.Log10(got/amp)
		cleanDB := 20 * math.Log10(got/math.Sqrt2/rest)
		t.Logf("%5.0f Hz: level %+.3f dB, error %.1f dB below the tone", c.hz, -lossDB, cleanDB)
		if lossDB > c.maxLossDB || lossDB < -0.05 || cleanDB < c.minCleanDB {
			t.Errorf("%v Hz: %.3f dB quieter (at most %v), error %.1f dB below (at least %v)", c.hz, lossDB, c.maxLossDB, cleanDB, c.minCleanDB)
		}
	}
}
