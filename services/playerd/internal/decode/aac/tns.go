package aac

import (
	"fmt"
	"math"
)

// Temporal noise shaping (4.6.9): per window up to three all-pole filters
// run over ranges of the spectrum.

const tnsMaxOrder = 12 // AAC-LC, long windows; 7 in short ones

type tnsFilter struct {
	length, order int
	down          bool
	lpc           [tnsMaxOrder + 1]float32
}

type tnsData struct {
	present bool
	nFilt   [8]int
	filt    [8][3]tnsFilter
}

func (t *tnsData) read(b *bitReader, info *icsInfo) error {
	short := info.windowSequence == eightShort
	nBits, lenBits, orderBits, maxOrder := uint(2), uint(6), uint(5), tnsMaxOrder
	if short {
		nBits, lenBits, orderBits, maxOrder = 1, 4, 3, 7
	}
	for w := range info.numWindows {
		t.nFilt[w] = int(b.read(nBits))
		if t.nFilt[w] == 0 {
			continue
		}
		res := uint(b.read(1)) + 3
		for f := range t.nFilt[w] {
			tf := &t.filt[w][f]
			tf.length = int(b.read(lenBits))
			tf.order = int(b.read(orderBits))
			if tf.order > maxOrder {
				return fmt.Errorf("%w: TNS filter of order %d", ErrCorrupt, tf.order)
			}
			if tf.order == 0 {
				continue
			}
			tf.down = b.bit()
			compress := uint(b.read(1))
			n := res - compress
			var parcor [tnsMaxOrder]float64
			for i := range tf.order {
				v := int(b.read(n))
				if v >= 1<<(n-1) {
					v -= 1 << n
				}
				parcor[i] = tnsCoef(v, res)
			}
			tf.lpcFrom(parcor[:tf.order])
		}
	}
	return nil
}

// tnsCoef is the inverse quantization of a reflection coefficient (4.6.9,
// temporal noise shaping, as are the conversion and filter below).
func tnsCoef(v int, res uint) float64 {
	half := float64(int(1) << (res - 1))
	if v >= 0 {
		return math.Sin(float64(v) / ((half - 0.5) / (math.Pi / 2)))
	}
	return math.Sin(float64(v) / ((half + 0.5) / (math.Pi / 2)))
}

// lpcFrom converts reflection coefficients to the direct-form filter.
func (tf *tnsFilter) lpcFrom(k []float64) {
	var a, tmp [tnsMaxOrder + 1]float64
	a[0] = 1
	for m := 1; m <= len(k); m++ {
		for i := 1; i < m; i++ {
			tmp[i] = a[i] + k[m-1]*a[m-i]
		}
		copy(a[1:m], tmp[1:m])
		a[m] = k[m-1]
	}
	for i := range a {
		tf.lpc[i] = float32(a[i])
	}
}

func (t *tnsData) apply(spec *[1024]float32, info *icsInfo, tnsMaxBands int) {
	winLen := 1024
	if info.windowSequence == eightShort {
		winLen = 128
	}
	limit := min(tnsMaxBands, info.maxSfb)
	for w := range info.numWindows {
		top := info.numSwb
		for f := range t.nFilt[w] {
			tf := &t.filt[w][f]
			bottom := max(top-tf.length, 0)
			lo, hi := min(bottom, limit), min(top, limit)
			top = bottom
			if tf.order == 0 {
				continue
			}
			start, end := int(info.swb[lo]), int(info.swb[hi])
			if end <= start {
				continue
			}
			x := spec[w*winLen+start : w*winLen+end]
			filter(x, tf.lpc[1:tf.order+1], tf.down)
		}
	}
}

// filter runs the all-pole filter y[n] = x[n] - sum a[i] y[n-i] in place,
// upwards or downwards in frequency.
func filter(x []float32, a []float32, down bool) {
	n := len(x)
	var hist [tnsMaxOrder]float32 // hist[i] is y[n-1-i]
	for k := range n {
		i := k
		if down {
			i = n - 1 - k
		}
		y := x[i]
		for j, c := range a {
			y -= c * hist[j]
		}
		copy(hist[1:len(a)], hist[:len(a)-1])
		hist[0] = y
		x[i] = y
	}
}
