// Package resample converts a beep.Streamer to another sample rate by the same
// Lagrange interpolation as beep.Resample (the same window of 2×quality
// source frames around each output position, read from the source in blocks
// of 512 frames), at a fraction of its cost: beep works out every weight per
// channel with 2q(2q−1) divisions, here the weights of a window are shared
// by both channels and, for the usual rates (44.1 → 48 kHz: 160 phases),
// precomputed per phase; otherwise worked out from prefix and suffix
// products with 2q divisions. The output equals beep's up to rounding
// (TestMatchesBeep).
package resample

import (
	"fmt"
	"math"

	"github.com/gopxl/beep/v2"
)

// Block is how many frames the resampler reads from its source at a time; a
// shorter read means the source ended.
const Block = 512

// Resampler streams its source at a new rate.
type Resampler struct {
	s          beep.Streamer
	ratio      float64 // source frames per output frame
	q2         int     // points per interpolation: 2 × quality
	buf1, buf2 [][2]float64
	off        int     // source position of buf2[0]
	pos        float64 // output position
	end        int     // source position after its last frame
	// den[n-1][j] is ∏_{m≠j} (j−m) for a window of n consecutive points.
	den              [][]float64
	t, pre, suf, wts []float64
	// For a ratio num/dn in lowest terms with a small dn, the weights of
	// a whole window repeat every dn output frames: table[ph] holds them
	// for the source position k + ph/dn. out counts output frames exactly.
	num, dn int64
	table   [][]float64
	out     int64
}

// maxPhases bounds the weight table: 44.1 → 48 kHz needs 160 phases,
// 11.025 → 48 kHz 640.
const maxPhases = 4096

// New resamples s from rate old to rate new with 2×quality points per
// output sample (1..64, as beep.Resample).
func New(quality int, old, new beep.SampleRate, s beep.Streamer) *Resampler {
	if quality < 1 || quality > 64 {
		panic(fmt.Errorf("resample: invalid quality: %d", quality))
	}
	ratio := float64(old) / float64(new)
	if ratio <= 0 || math.IsInf(ratio, 0) || math.IsNaN(ratio) {
		panic(fmt.Errorf("resample: invalid ratio: %f", ratio))
	}
	q2 := 2 * quality
	r := &Resampler{
		s: s, ratio: ratio, q2: q2,
		buf1: make([][2]float64, Block), buf2: make([][2]float64, Block),
		off: -Block, end: math.MaxInt,
		den: make([][]float64, q2),
		t:   make([]float64, q2), pre: make([]float64, q2+1), suf: make([]float64, q2+1), wts: make([]float64, q2),
	}
	for n := 1; n <= q2; n++ {
		d := make([]float64, n)
		for j := range d {
			d[j] = 1
			for m := range n {
				if m != j {
					d[j] *= float64(j - m)
				}
			}
		}
		r.den[n-1] = d
	}
	num, dn := int64(old), int64(new)
	for a, b := num, dn; b != 0; {
		a, b = b, a%b
		if b == 0 {
			num, dn = num/a, dn/a
		}
	}
	if num > 0 && dn <= maxPhases {
		r.num, r.dn = num, dn
		r.table = make([][]float64, dn)
		for ph := range r.table {
			half := (q2 - 1) / 2
			w := r.weights(float64(half)+float64(ph)/float64(dn), 0, q2)
			r.table[ph] = append([]float64(nil), w...)
		}
	}
	return r
}

// Stream fills samples with resampled frames.
func (r *Resampler) Stream(samples [][2]float64) (n int, ok bool) {
	for len(samples) > 0 {
		want := r.pos * r.ratio
		start := int(want) - (r.q2-1)/2
		end := int(want) + r.q2/2 + 1
		for end > r.off+Block {
			sn, _ := r.s.Stream(r.buf1)
			if sn < len(r.buf1) {
				r.end = r.off + Block + sn
			}
			r.buf1, r.buf2 = r.buf2, r.buf1
			r.off += Block
		}
		if int(want) >= r.end {
			return n, n > 0
		}
		var w []float64
		if k := r.out * r.num; r.table != nil && start >= 0 && end <= r.end && k/r.dn == int64(int(want)) {
			// The same window as beep's (its position is from the
			// float product, which can fall just short of a whole
			// number where the exact one is whole: then it is
			// worked out below).
			w = r.table[k%r.dn]
		} else {
			start = max(start, 0)
			end = min(end, r.end)
			w = r.weights(want, start, end-start)
		}
		var l, rt float64
		off1 := r.off - Block
		for i, wi := range w {
			x := start + i
			var y [2]float64
			if x < r.off {
				y = r.buf1[x-off1]
			} else {
				y = r.buf2[x-r.off]
			}
			l += y[0] * wi
			rt += y[1] * wi
		}
		samples[0] = [2]float64{l, rt}
		samples = samples[1:]
		n++
		r.pos++
		r.out++
	}
	return n, true
}

// weights are the Lagrange basis polynomials of the n points start.. at x:
// w_j = ∏_{m≠j} (x−X_m) / ∏_{m≠j} (X_j−X_m).
func (r *Resampler) weights(x float64, start, n int) []float64 {
	t, pre, suf := r.t[:n], r.pre[:n+1], r.suf[:n+1]
	for i := range t {
		t[i] = x - float64(start+i)
	}
	pre[0], suf[n] = 1, 1
	for i := range n {
		pre[i+1] = pre[i] * t[i]
	}
	for i := n - 1; i >= 0; i-- {
		suf[i] = suf[i+1] * t[i]
	}
	w, den := r.wts[:n], r.den[n-1]
	for j := range w {
		w[j] = pre[j] * suf[j+1] / den[j]
	}
	return w
}

// Err passes on the source's error.
func (r *Resampler) Err() error { return r.s.Err() }
