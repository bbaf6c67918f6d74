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
var tpPhases = designInterpolator()

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

func designInterpolator() (phases [tpFactor][tpTaps]float64) {
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
	// Each phase passes a constant unchanged (tpNeg relies on it).
	for p := range phases {
		var sum float64
		for _, h := range phases[p] {
			sum += h
		}
		for j := range phases[p] {
			phases[p][j] /= sum
		}
	}
	return phases
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

// tpNeg is the largest sum of a phase's negative taps, as a magnitude.
// Each phase's taps add up to 1, so over a window whose samples lie in
// [lo, hi] a phase gives at most hi + tpNeg·(hi−lo) and at least
// lo − tpNeg·(hi−lo): a window of nearly equal samples (low frequencies,
// most of music's energy) cannot interpolate far beyond them.
var tpNeg = func() (m float64) {
	for _, p := range tpPhases {
		var n float64
		for _, h := range p {
			n -= min(h, 0)
		}
		m = max(m, n)
	}
	return m
}()

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
	hist   [][]float64 // per channel: the last tpTaps−1 samples, then the chunk being looked at
	peak   float64     // linear, ≥ every sample's magnitude
	lo, hi []float64   // each tpTaps samples' extremes, for scan
}

func newTruePeak(channels int) truePeak {
	t := truePeak{hist: make([][]float64, channels)}
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
// peak and keeps the last tpTaps−1 as history. Only windows that could
// interpolate above the peak found so far are interpolated; the tests
// that skip the others are exact bounds, so skipping cannot change the
// result (TestTruePeakSkipsExactly).
func (t *truePeak) scan(c int) {
	buf := t.hist[c]
	// Window i covers buf[i : i+tpTaps]. Groups of tpTaps windows, those
	// from g·tpTaps, span the samples of blocks g and g+1 of tpTaps
	// samples each, whose extremes are found in one pass; they give the
	// sample peak too.
	windows := len(buf) - tpTaps + 1
	blocks := (len(buf) + tpTaps - 1) / tpTaps
	t.lo, t.hi = t.lo[:0], t.hi[:0]
	for b := range blocks {
		// In ordered integers, whose min and max compile to conditional
		// moves: the comparisons of floats were branches that noise
		// mispredicted, and made this pass cost as much as the
		// K-weighting.
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, x := range buf[b*tpTaps : min(b*tpTaps+tpTaps, len(buf))] {
			k := ordered(x)
			lo, hi = min(lo, k), max(hi, k)
		}
		t.lo, t.hi = append(t.lo, unordered(lo)), append(t.hi, unordered(hi))
		if a := max(-t.lo[b], t.hi[b]); a > t.peak {
			t.peak = a
		}
	}
	for g := 0; g*tpTaps < windows; g++ {
		lo, hi := t.lo[g], t.hi[g]
		if g+1 < blocks {
			lo, hi = min(lo, t.lo[g+1]), max(hi, t.hi[g+1])
		}
		spread := tpNeg * (hi - lo)
		if max(hi+spread, spread-lo)*(1+1e-9) <= t.peak {
			continue
		}
		start, end := g*tpTaps, min(g*tpTaps+tpTaps, windows)
		// The window's energy, slid along: by Cauchy–Schwarz no phase can
		// give more than its L2 norm times the window's, so a window
		// whose energy is below (peak/tpL2)² is skipped, exactly.
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
				}
				break
			}
			x0, x1 := buf[i], buf[i+tpTaps]
			energy += x1*x1 - x0*x0
			if !need && energy*tpL2Squared*(1+1e-9) <= pp {
				continue
			}
			t.two((*[tpTaps + 1]float64)(buf[i : i+tpTaps+1]))
		}
	}
	n := copy(buf, buf[len(buf)-(tpTaps-1):])
	t.hist[c] = buf[:n]
}

// dBTP is the true peak in dB; silence is −∞.
func (t *truePeak) dBTP() float64 { return 20 * math.Log10(t.peak) }

// ordered maps a float64 (not NaN) to an int64 of the same order: a
// negative float's bits count down as it falls, so all but its sign bit
// are flipped.
func ordered(x float64) int64 {
	b := int64(math.Float64bits(x))
	return b ^ int64(uint64(b>>63)>>1)
}

// unordered is ordered's inverse (ordered is its own).
func unordered(k int64) float64 {
	return math.Float64frombits(uint64(k ^ int64(uint64(k>>63)>>1)))
}

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
	for _, y := range [...]float64{y1, y2, y3} {
		if a := math.Abs(y); a > t.peak {
			t.peak = a
		}
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
	// Not the builtin max, as in scan.
	for _, y := range [...]float64{y1, y2, y3, z1, z2, z3} {
		if a := math.Abs(y); a > t.peak {
			t.peak = a
		}
	}
}
