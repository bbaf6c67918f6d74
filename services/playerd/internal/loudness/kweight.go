package loudness

import "math"

// biquad is one second-order section, a0 normalised to 1.
type biquad struct{ b0, b1, b2, a1, a2 float64 }

// BS.1770-4 Table 1 and Table 2: the two stages of the K-weighting at
// 48 kHz, a high shelf (the head's effect) and a high-pass (the RLB curve).
var (
	shelf48    = biquad{1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585}
	highpass48 = biquad{1.0, -2.0, 1.0, -1.99004745483398, 0.99007225036621}
)

// analog is a second-order analog prototype normalised to its pole
// frequency f0: H(S) = (n2·S² + n1·S + n0) / (S² + d1·S + 1), S = s/ω0.
type analog struct{ f0, n2, n1, n0, d1 float64 }

// prototype undoes the bilinear transform of q at rate fs. The transform is
// taken as prewarped at the poles' natural frequency, so that frequency is
// where the digital and analog responses agree exactly; with
// S = (z−1)/(K(z+1)) and K = tan(π·f0/fs) the denominator
// 1 + a1·z⁻¹ + a2·z⁻² gives K² = (1+a1+a2)/(1−a1+a2) and
// K·d1 = 2(1−a2)/(1−a1+a2), and the numerator's three coefficients give
// n0, n1, n2 in the same way.
func prototype(q biquad, fs float64) analog {
	k2 := (1 + q.a1 + q.a2) / (1 - q.a1 + q.a2)
	k := math.Sqrt(k2)
	d := 4 / (1 - q.a1 + q.a2) // the common scale the normalisation divided out
	b2, b1, b0 := q.b0*d, q.b1*d, q.b2*d
	return analog{
		f0: fs / math.Pi * math.Atan(k),
		d1: 2 * (1 - q.a2) / (1 - q.a1 + q.a2) / k,
		n0: (b2 + b1 + b0) / 4 / k2,
		n2: (b2 - b1 + b0) / 4,
		n1: (b2 - b0) / 2 / k,
	}
}

// digital is the bilinear transform of p at rate fs, prewarped at p.f0.
// Above a fraction of the Nyquist frequency the prewarp point is held,
// so the shelf (1.7 kHz) still has a filter at the lowest rates the
// decoders accept.
func (p analog) digital(fs float64) biquad {
	f0 := min(p.f0, 0.45*fs)
	k := math.Tan(math.Pi * f0 / fs)
	k2 := k * k
	a0 := 1 + p.d1*k + k2
	return biquad{
		b0: (p.n2 + p.n1*k + p.n0*k2) / a0,
		b1: 2 * (p.n0*k2 - p.n2) / a0,
		b2: (p.n2 - p.n1*k + p.n0*k2) / a0,
		a1: 2 * (k2 - 1) / a0,
		a2: (1 - p.d1*k + k2) / a0,
	}
}

// kWeighting returns the two stages for sample rate fs.
func kWeighting(fs float64) (shelf, highpass biquad) {
	if fs == 48000 {
		return shelf48, highpass48
	}
	return prototype(shelf48, 48000).digital(fs), prototype(highpass48, 48000).digital(fs)
}

// biquadState is one channel's memory of one section (transposed direct
// form II, run in Meter.weigh).
type biquadState struct{ s1, s2 float64 }

// gain is the magnitude response of q at frequency f for rate fs.
func (q biquad) gain(f, fs float64) float64 {
	w := 2 * math.Pi * f / fs
	z1 := complex(math.Cos(w), -math.Sin(w))
	z2 := z1 * z1
	num := complex(q.b0, 0) + complex(q.b1, 0)*z1 + complex(q.b2, 0)*z2
	den := 1 + complex(q.a1, 0)*z1 + complex(q.a2, 0)*z2
	return cmplxAbs(num / den)
}

func cmplxAbs(c complex128) float64 { return math.Hypot(real(c), imag(c)) }
