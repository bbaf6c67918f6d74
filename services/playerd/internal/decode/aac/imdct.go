package aac

import (
	"math"
	"math/bits"
)

// The inverse MDCT of 4.6.18 by way of a DCT-IV of half the length, which
// is an N/4-point complex FFT between two twiddles:
//
//	z[k] = (X[2k] + i·X[M-1-2k]) · e^{-iπ(k+1/8)/M}
//	Z    = FFT(z)
//	Y[p] = Z[p] · e^{-iπ(p+1/8)/M}
//	u[2p] = Re Y[p],  u[M-1-2p] = -Im Y[p]
//
// with M = N/2 coefficients; the N outputs are u shifted by M/2 and
// unfolded by its symmetries.

type imdct struct {
	m       int // coefficients
	fft     fft
	twiddle []complex64 // e^{-iπ(k+1/8)/M}, scaled by 1/M on one side
	z       []complex64
	u       []float32
}

func newIMDCT(m int) *imdct {
	t := &imdct{m: m, fft: newFFT(m / 2), twiddle: make([]complex64, m/2), z: make([]complex64, m/2), u: make([]float32, m)}
	for k := range m / 2 {
		a := -math.Pi * (float64(k) + 0.125) / float64(m)
		t.twiddle[k] = complex(float32(math.Cos(a)), float32(math.Sin(a)))
	}
	return t
}

// run computes the 2M outputs of the M coefficients in x into out, scaled
// by scale.
func (t *imdct) run(x []float32, out []float32, scale float32) {
	m := t.m
	z := t.z
	for k := range m / 2 {
		z[k] = complex(x[2*k], x[m-1-2*k]) * t.twiddle[k]
	}
	t.fft.run(z)
	u := t.u
	for p := range m / 2 {
		y := z[p] * t.twiddle[p]
		u[2*p] = real(y) * scale
		u[m-1-2*p] = -imag(y) * scale
	}
	h := m / 2
	for n := range h {
		out[n] = u[n+h]
	}
	for n := h; n < 3*h; n++ {
		out[n] = -u[3*h-1-n]
	}
	for n := 3 * h; n < 2*m; n++ {
		out[n] = -u[n-3*h]
	}
}

// fft is an in-place radix-2 complex FFT of a power-of-two size.
type fft struct {
	n     int
	rev   []int32
	roots []complex64 // e^{-2πik/n}, k < n/2
}

func newFFT(n int) fft {
	f := fft{n: n, rev: make([]int32, n), roots: make([]complex64, n/2)}
	shift := 64 - uint(bits.TrailingZeros(uint(n)))
	for i := range n {
		f.rev[i] = int32(bits.Reverse64(uint64(i)) >> shift)
	}
	for k := range n / 2 {
		a := -2 * math.Pi * float64(k) / float64(n)
		f.roots[k] = complex(float32(math.Cos(a)), float32(math.Sin(a)))
	}
	return f
}

func (f *fft) run(x []complex64) {
	n := f.n
	x = x[:n]
	for i, r := range f.rev {
		if int(r) > i {
			x[i], x[r] = x[r], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half := size >> 1
		step := n / size
		for start := 0; start < n; start += size {
			for k := range half {
				w := f.roots[k*step]
				a := x[start+k]
				b := x[start+k+half] * w
				x[start+k] = a + b
				x[start+k+half] = a - b
			}
		}
	}
}

// Windows: the rising halves of the sine and KBD windows (4.6.11), long
// (1024) and short (128); a falling half is the rising one backwards.
var (
	sineLong, kbdLong   [1024]float32
	sineShort, kbdShort [128]float32
)

func init() {
	sine(sineLong[:])
	sine(sineShort[:])
	kbd(kbdLong[:], 4)
	kbd(kbdShort[:], 6)
}

func sine(w []float32) {
	n := 2 * len(w)
	for i := range w {
		w[i] = float32(math.Sin(math.Pi / float64(n) * (float64(i) + 0.5)))
	}
}

func kbd(w []float32, alpha float64) {
	n := 2 * len(w)
	kernel := make([]float64, n/2+1)
	var total float64
	for p := range kernel {
		r := (float64(p) - float64(n)/4) / (float64(n) / 4)
		kernel[p] = bessel0(math.Pi * alpha * math.Sqrt(1-r*r))
		total += kernel[p]
	}
	var sum float64
	for i := range w {
		sum += kernel[i]
		w[i] = float32(math.Sqrt(sum / total))
	}
}

// bessel0 is the zeroth-order modified Bessel function of the first kind,
// by its power series.
func bessel0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 50; k++ {
		term *= (x / 2) / float64(k)
		sum += term * term
	}
	return sum
}

func longWindow(shape int) *[1024]float32 {
	if shape == 1 {
		return &kbdLong
	}
	return &sineLong
}

func shortWindow(shape int) *[128]float32 {
	if shape == 1 {
		return &kbdShort
	}
	return &sineShort
}
