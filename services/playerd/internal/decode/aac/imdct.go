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
	zf      []complex64
	u       []float32
}

func newIMDCT(m int) *imdct {
	t := &imdct{m: m, fft: newFFT(m / 2), twiddle: make([]complex64, m/2), z: make([]complex64, m/2), zf: make([]complex64, m/2), u: make([]float32, m)}
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
	t.fft.run(t.zf, z)
	u := t.u
	for p := range m / 2 {
		y := t.zf[p] * t.twiddle[p]
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

// fft is an in-place complex FFT of a power-of-two size, decimation in time:
// the input is put in mixed-radix digit-reversed order, a radix-2 stage
// runs first when the size is an odd power of two, radix-4 stages do the
// rest (a quarter fewer multiplications than radix 2, and half the passes).
type fft struct {
	n      int
	perm   []int32
	radix2 bool
	stages []fftStage
}

// fftStage combines four transforms of length l into one of 4l; w holds
// the twiddles W^k, W^2k, W^3k (W = e^{-2πi/4l}) for k < l.
type fftStage struct {
	l int
	w [][3]complex64
}

func newFFT(n int) fft {
	f := fft{n: n, perm: make([]int32, n)}
	logn := bits.TrailingZeros(uint(n))
	f.radix2 = logn%2 == 1
	// The radices from the top of the recursion down.
	var radices []int
	for m := n; m > 1; {
		if m == 2 {
			radices = append(radices, 2)
			m = 1
			continue
		}
		radices = append(radices, 4)
		m /= 4
	}
	for i := range n {
		pos, rest, size := 0, i, n
		for _, r := range radices {
			size /= r
			pos += rest % r * size
			rest /= r
		}
		f.perm[pos] = int32(i)
	}
	l := 1
	if f.radix2 {
		l = 2
	}
	for ; l < n; l *= 4 {
		st := fftStage{l: l, w: make([][3]complex64, l)}
		for k := range l {
			for j := 1; j <= 3; j++ {
				a := -2 * math.Pi * float64(j*k) / float64(4*l)
				st.w[k][j-1] = complex(float32(math.Cos(a)), float32(math.Sin(a)))
			}
		}
		f.stages = append(f.stages, st)
	}
	return f
}

// run transforms src into dst (both n long).
func (f *fft) run(dst, src []complex64) {
	n := f.n
	dst = dst[:n]
	for i, p := range f.perm {
		dst[i] = src[p]
	}
	if f.radix2 {
		for i := 0; i < n; i += 2 {
			a, b := dst[i], dst[i+1]
			dst[i], dst[i+1] = a+b, a-b
		}
	}
	for si := range f.stages {
		st := &f.stages[si]
		l := st.l
		for base := 0; base < n; base += 4 * l {
			x := dst[base : base+4*l]
			x0, x1, x2, x3 := x[:l], x[l:2*l], x[2*l:3*l], x[3*l:4*l]
			for k, w := range st.w {
				a0 := x0[k]
				a1 := x1[k] * w[0]
				a2 := x2[k] * w[1]
				a3 := x3[k] * w[2]
				s02, d02 := a0+a2, a0-a2
				s13, d13 := a1+a3, a1-a3
				// -i·d13
				md := complex(imag(d13), -real(d13))
				x0[k] = s02 + s13
				x1[k] = d02 + md
				x2[k] = s02 - s13
				x3[k] = d02 - md
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
// by its power series: the KBD window's definition (4.6.11) uses it.
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
