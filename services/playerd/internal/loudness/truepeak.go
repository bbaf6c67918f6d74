package loudness

import "math"

// The true-peak interpolator: BS.1770-4 Annex 2 asks for at least 4×
// oversampling by an interpolating low-pass filter before the absolute
// maximum is taken. Ours is our own design, not the Annex's example: a
// windowed sinc of 4 phases × 16 taps (64 taps at the oversampled rate,
// the centre one on an input sample),
// cut off at the input's Nyquist frequency, under a Kaiser window with
// β = 7. Its phases are flat to within ±0.02 dB up to 0.3 of the input rate
// (TestInterpolatorFlat), where a 4× interpolator's sampling error — not the
// filter — dominates (at most −0.69 dB for a tone at fs/2, none at fs/4,
// fs/6 and fs/8 with the phases of Tech 3341's true-peak cases).
const (
	tpFactor = 4
	tpTaps   = 16 // per phase
	tpBeta   = 7.0
)

// tpPhases holds each phase's taps, newest sample first.
var tpPhases, tpNorm = designInterpolator()

// tpL2Squared is the largest squared L2 norm of the phases.
var tpL2Squared = func() (m float64) {
	for _, p := range tpPhases {
		var e float64
		for _, h := range p {
			e += h * h
		}
		m = max(m, e)
	}
	return m
}()

func designInterpolator() (phases [tpFactor][tpTaps]float64, norm [tpFactor]float64) {
	// The centre tap falls on phase 0, so phase 0 is the input itself and
	// phases 1–3 interpolate at a quarter, half and three quarters of the
	// way to the next sample.
	n := tpFactor * tpTaps
	centre := n / 2
	i0b := besselI0(tpBeta)
	for i := range n {
		t := float64(i-centre) / tpFactor // in input samples
		sinc := 1.0
		if t != 0 {
			sinc = math.Sin(math.Pi*t) / (math.Pi * t)
		}
		r := float64(i-centre) / float64(centre)
		w := besselI0(tpBeta*math.Sqrt(max(0, 1-r*r))) / i0b
		phases[i%tpFactor][i/tpFactor] = sinc * w
	}
	// Each phase passes a constant unchanged, and its L1 norm bounds what
	// it can make of a window of samples (used to skip quiet stretches).
	for p := range phases {
		var sum float64
		for _, h := range phases[p] {
			sum += h
		}
		for j := range phases[p] {
			phases[p][j] /= sum
			norm[p] += math.Abs(phases[p][j])
		}
	}
	return phases, norm
}

// besselI0 is the modified Bessel function of the first kind, order 0, by
// its power series (converges fast for the β used here).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 50; k++ {
		term *= (x / 2) / float64(k)
		sum += term * term
		if term*term < sum*1e-17 {
			break
		}
	}
	return sum
}

// tpRun is how many positions share one check of whether they could
// reach the peak.
const tpRun = 64

// tpTapsRev holds each phase's taps oldest sample first, the order of the
// buffers they run over.
var tpTapsRev = func() (r [tpFactor][tpTaps]float64) {
	for p := range tpPhases {
		for j := range tpTaps {
			r[p][j] = tpPhases[p][tpTaps-1-j]
		}
	}
	return r
}()

// truePeak tracks the maximum of the oversampled signal over all channels.
type truePeak struct {
	hist  [][]float64 // per channel: the last tpTaps−1 samples, then the chunk being looked at
	peak  float64     // linear, ≥ every sample's magnitude
	bound float64     // max of tpNorm: |interpolated| ≤ bound × max |window|
}

func newTruePeak(channels int) truePeak {
	b := 0.0
	for _, n := range tpNorm {
		b = max(b, n)
	}
	t := truePeak{hist: make([][]float64, channels), bound: b}
	for c := range t.hist {
		t.hist[c] = make([]float64, tpTaps-1, 4096)
	}
	return t
}

// buffer is channel c's history with room for n more samples, which the
// caller writes into the returned slice's tail before calling scan.
func (t *truePeak) buffer(c, n int) []float64 {
	h := t.hist[c][:tpTaps-1]
	h = append(h, make([]float64, n)...)
	t.hist[c] = h
	return h[tpTaps-1:]
}

// scan takes channel c's new samples (written through buffer) into the
// peak and keeps the last tpTaps−1 as history. Stretches whose every
// sample is below peak/bound cannot interpolate above the peak and are
// skipped, which cannot change the result.
func (t *truePeak) scan(c int) {
	buf := t.hist[c]
	peak := t.peak
	for _, x := range buf[tpTaps-1:] {
		// Not the builtin max: its care for NaN and −0 made this line
		// the meter's most costly.
		if a := math.Abs(x); a > peak {
			peak = a
		}
	}
	t.peak = peak
	t.interpolate(c)
}

// interpolate is scan once the sample peak has taken channel c's new
// samples.
func (t *truePeak) interpolate(c int) {
	buf := t.hist[c]
	limit := t.peak / t.bound
	// Window i covers buf[i : i+tpTaps] and interpolates between its last
	// two samples' predecessor and itself.
	for start := 0; start+tpTaps <= len(buf); start += tpRun {
		end := min(start+tpRun, len(buf)-tpTaps+1) // windows [start, end)
		loud := false
		for _, x := range buf[start : end+tpTaps-1] {
			if math.Abs(x) > limit {
				loud = true
				break
			}
		}
		if !loud {
			continue
		}
		// The window's energy, slid along: by Cauchy–Schwarz no phase can
		// give more than its L2 norm times the window's, so a window
		// whose energy is below (peak/tpL2)² is skipped, exactly. On
		// music, whose level sits well below its peaks, that is most.
		var energy float64
		for _, x := range buf[start : start+tpTaps] {
			energy += x * x
		}
		// Windows go in pairs: the second's energy is slid on from the
		// first's, and where either could reach the peak both are
		// interpolated in one loop, whose six independent sums the CPU
		// overlaps (one window's three are a chain of dependent adds that
		// made it wait). Interpolating a window that could not reach the
		// peak changes nothing, and each sum is taken in the same order
		// as one window alone, so the result is the same to the bit.
		for i := start; i < end; i += 2 {
			if i > start {
				x0, x1 := buf[i-1], buf[i+tpTaps-1]
				energy += x1*x1 - x0*x0
			}
			pp := t.peak * t.peak
			need := energy*tpL2Squared*(1+1e-9) > pp
			if i+1 == end {
				if need {
					t.one((*[tpTaps]float64)(buf[i : i+tpTaps]))
					limit = t.peak / t.bound
				}
				break
			}
			x0, x1 := buf[i], buf[i+tpTaps]
			energy += x1*x1 - x0*x0
			if !need && energy*tpL2Squared*(1+1e-9) <= pp {
				continue
			}
			t.two((*[tpTaps + 1]float64)(buf[i : i+tpTaps+1]))
			limit = t.peak / t.bound
		}
	}
	n := copy(buf, buf[len(buf)-(tpTaps-1):])
	t.hist[c] = buf[:n]
}

// dBTP is the true peak in dB; silence is −∞.
func (t *truePeak) dBTP() float64 { return 20 * math.Log10(t.peak) }

// one interpolates the window w (phases 1–3; phase 0 is a sample itself)
// into the peak.
func (t *truePeak) one(w *[tpTaps]float64) {
	h1, h2, h3 := &tpTapsRev[1], &tpTapsRev[2], &tpTapsRev[3]
	var y1, y2, y3 float64
	for j := range tpTaps {
		v := w[j]
		y1 += h1[j] * v
		y2 += h2[j] * v
		y3 += h3[j] * v
	}
	if y := max(math.Abs(y1), math.Abs(y2), math.Abs(y3)); y > t.peak {
		t.peak = y
	}
}

// two interpolates the windows w[0:tpTaps] and w[1:tpTaps+1] into the
// peak.
func (t *truePeak) two(w *[tpTaps + 1]float64) {
	h1, h2, h3 := &tpTapsRev[1], &tpTapsRev[2], &tpTapsRev[3]
	var y1, y2, y3, z1, z2, z3 float64
	for j := range tpTaps {
		v, u := w[j], w[j+1]
		y1 += h1[j] * v
		z1 += h1[j] * u
		y2 += h2[j] * v
		z2 += h2[j] * u
		y3 += h3[j] * v
		z3 += h3[j] * u
	}
	y := max(math.Abs(y1), math.Abs(y2), math.Abs(y3), math.Abs(z1), math.Abs(z2), math.Abs(z3))
	if y > t.peak {
		t.peak = y
	}
}
