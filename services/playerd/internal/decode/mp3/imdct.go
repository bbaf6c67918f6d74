package mp3

import "math"

// The IMDCT of 2.4.3.4.10.2, x[i] = Σ X[k]·cos(π/2n·(2i+1+n/2)(2k+1)), is
// for n = 36 a DCT-IV of 18 points read out with its symmetries:
// z[j] = Σ X[k]·cos(π/18·(j+½)(k+½)) gives x[i] = z[9+i] for i < 9,
// -z[26-i] for 9 <= i < 27 and -z[i-27] after. The DCT-IV is a DCT-II of
// the input scaled by 2·cos(π(k+½)/36), followed by z[j] = U[j] - z[j-1];
// the 18-point DCT-II splits into two of 9 points on the sums and
// differences of its mirrored inputs. The 12-point IMDCT of short blocks
// is the same with a 6-point DCT-IV, computed directly.

var (
	// imdctWindows are the long windows of block types 0, 1 and 3 (2 is
	// unused), with the signs of the symmetries folded in.
	imdctWindows [4][36]float32
	shortWindow  [12]float32
	dct4Pre      [18]float32   // 2·cos(π(k+½)/36)
	dct2Odd      [9]float32    // 1/(2·cos((2k+1)π/36))
	dct9Cos      [9][4]float32 // cos((2k+1)mπ/18)
	dct6         [6][6]float32 // cos(π/6·(n+½)(k+½))
)

func init() {
	sin := func(x float64) float64 { return math.Sin(x) }
	for i := range 36 {
		long := sin(math.Pi / 36 * (float64(i) + 0.5))
		var start, stop float64
		switch {
		case i < 18:
			start = long
		case i < 24:
			start = 1
		case i < 30:
			start = sin(math.Pi / 12 * (float64(i-18) + 0.5))
		}
		switch {
		case i < 6:
		case i < 12:
			stop = sin(math.Pi / 12 * (float64(i-6) + 0.5))
		case i < 18:
			stop = 1
		default:
			stop = long
		}
		sign := 1.0
		if i >= 9 {
			sign = -1
		}
		imdctWindows[blockNormal][i] = float32(sign * long)
		imdctWindows[blockStart][i] = float32(sign * start)
		imdctWindows[blockStop][i] = float32(sign * stop)
		imdctWindows[blockShort][i] = float32(sign * long) // unused
	}
	for i := range 12 {
		shortWindow[i] = float32(sin(math.Pi / 12 * (float64(i) + 0.5)))
	}
	for k := range 18 {
		dct4Pre[k] = float32(2 * math.Cos(math.Pi*(float64(k)+0.5)/36))
	}
	for k := range 9 {
		dct2Odd[k] = float32(1 / (2 * math.Cos(float64(2*k+1)*math.Pi/36)))
	}
	for m := range 9 {
		for k := range 4 {
			dct9Cos[m][k] = float32(math.Cos(float64((2*k+1)*m) * math.Pi / 18))
		}
	}
	for n := range 6 {
		for k := range 6 {
			dct6[n][k] = float32(math.Cos(math.Pi / 6 * (float64(n) + 0.5) * (float64(k) + 0.5)))
		}
	}
}

// dct9 is the 9-point DCT-II, X[m] = Σ x[k]·cos((2k+1)mπ/18), from the
// sums and differences of x[k] and x[8-k].
func dct9(x, X *[9]float32) {
	s0, s1, s2, s3 := x[0]+x[8], x[1]+x[7], x[2]+x[6], x[3]+x[5]
	d0, d1, d2, d3 := x[0]-x[8], x[1]-x[7], x[2]-x[6], x[3]-x[5]
	t := x[4]
	c := &dct9Cos
	X[0] = s0 + s1 + s2 + s3 + t
	X[1] = d0*c[1][0] + d1*c[1][1] + d2*c[1][2] + d3*c[1][3]
	X[2] = s0*c[2][0] + s1*c[2][1] + s2*c[2][2] + s3*c[2][3] - t
	X[3] = d0*c[3][0] + d2*c[3][2] + d3*c[3][3] // cos(π/2) drops d1
	X[4] = s0*c[4][0] + s1*c[4][1] + s2*c[4][2] + s3*c[4][3] + t
	X[5] = d0*c[5][0] + d1*c[5][1] + d2*c[5][2] + d3*c[5][3]
	X[6] = s0*c[6][0] + s1*c[6][1] + s2*c[6][2] + s3*c[6][3] - t
	X[7] = d0*c[7][0] + d1*c[7][1] + d2*c[7][2] + d3*c[7][3]
	X[8] = s0*c[8][0] + s1*c[8][1] + s2*c[8][2] + s3*c[8][3] + t
}

// dct4x18 is the 18-point DCT-IV, z[j] = Σ X[k]·cos(π/18·(j+½)(k+½)).
func dct4x18(x, z *[18]float32) {
	var g, h, G, H [9]float32
	for k := range 9 {
		a := x[k] * dct4Pre[k]
		b := x[17-k] * dct4Pre[17-k]
		g[k] = a + b
		h[k] = (a - b) * dct2Odd[k]
	}
	dct9(&g, &G)
	dct9(&h, &H)
	prev := G[0] * 0.5
	z[0] = prev
	for m := range 8 {
		prev = H[m] + H[m+1] - prev
		z[2*m+1] = prev
		prev = G[m+1] - prev
		z[2*m+2] = prev
	}
	z[17] = H[8] - prev
}

// imdct36 transforms one long-block subband, windows it with win (signs
// folded), adds the overlap of the previous granule from prev and leaves
// this granule's second half there.
func imdct36(x *[18]float32, prev *[18]float32, win *[36]float32, out *[18]float32) {
	var z [18]float32
	dct4x18(x, &z)
	for i := range 9 {
		out[i] = z[9+i]*win[i] + prev[i]
		out[9+i] = z[17-i]*win[9+i] + prev[9+i]
		prev[i] = z[8-i] * win[18+i]
		prev[9+i] = z[i] * win[27+i]
	}
}

// imdct12 transforms the three short windows of one subband, whose values
// are interleaved (line k of window w at 3k+w), overlaps them with each
// other at 6-sample steps and with prev.
func imdct12(x *[18]float32, prev *[18]float32, out *[18]float32) {
	var o [36]float32
	for w := range 3 {
		var z [6]float32
		for n := range 6 {
			c := &dct6[n]
			z[n] = x[w]*c[0] + x[3+w]*c[1] + x[6+w]*c[2] + x[9+w]*c[3] + x[12+w]*c[4] + x[15+w]*c[5]
		}
		base := 6 + 6*w
		for i := range 3 {
			o[base+i] += z[i+3] * shortWindow[i]
			o[base+9+i] -= z[i] * shortWindow[9+i]
		}
		for i := 3; i < 9; i++ {
			o[base+i] -= z[8-i] * shortWindow[i]
		}
	}
	for i := range 18 {
		out[i] = o[i] + prev[i]
		prev[i] = o[18+i]
	}
}
