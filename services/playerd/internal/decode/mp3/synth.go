package mp3

import "math"

// The polyphase synthesis of 2.4.3.4.10.3 (Annex A, Figure A.2) with its
// 64 × 32 matrixing done as one 32-point DCT-II (dct32.go, the fast
// recursion of B. G. Lee, IEEE Trans. ASSP 32(6), 1984: the even outputs are the half-size DCT of x[k] + x[N-1-k],
// the odd ones sums of neighbours in the half-size DCT of the differences
// scaled by 1/(2·cos((2k+1)π/2N))): with
// X[m] = Σ S[k]·cos((2k+1)mπ/64), the standard's V[i] is X[16+i] for
// i < 16, 0 at 16, -X[48-i] up to 47 and -X[i-48] after. Its output sample
// j sums, over the last 16 blocks d, D[32d+j] times V[j] (d even) or
// V[32+j] (d odd) of block t-d. Samples j and 32-j read the same two
// values of each block, X[16+j] and X[16-j], which the history keeps per
// coefficient so that each is read once, in sequence.

// synthWin holds the window for samples j (lo) and 32-j (hi) as they meet
// the history: lo[j][d] multiplies X_{t-d}[16+j] for even d and
// X_{t-d}[16-j] for odd d, the signs of V folded in; hi likewise for 32-j.
var synthLo, synthHi [17][16]float32

//go:generate go run gendct.go

// synthesisWindow is Table 3-B.3's D[i] (tableb3.go) with each entry
// taken as the multiple of 2^-16 its nine decimals are rounded from: the
// table was printed from those (every entry lies within 5e-10 of one,
// TestWindowTable), and the exact values keep float32 rounding off them.
func synthesisWindow() (d [512]float64) {
	for i, v := range tableB3 {
		d[i] = math.Round(v*65536) / 65536
	}
	return d
}

func init() {
	d := synthesisWindow()
	for dd := range 16 {
		odd := dd%2 == 1
		for j := 0; j <= 16; j++ {
			// V[j] is X[16+j] (j < 16), 0 (j = 16); V[32+j] is -X[16-j].
			lo := d[32*dd+j]
			switch {
			case odd:
				lo = -lo
			case j == 16:
				lo = 0
			}
			synthLo[j][dd] = float32(lo)
			if j > 0 && j < 16 {
				// V[32-j] is -X[16+j]; V[64-j] is -X[16-j].
				synthHi[j][dd] = float32(-d[32*dd+32-j])
			}
		}
	}
}

// synthesis is one channel's filter bank: the DCT outputs of the last 16
// blocks, per coefficient, twice over so 16 in a row never wrap.
type synthesis struct {
	hist [32][32]float32
	k    int
}

// block turns 32 subband samples into 32 output samples.
func (s *synthesis) block(in *[32]float32, out *[32]float32) {
	var x [32]float32
	dct32(in, &x)
	s.k = (s.k + 15) & 15
	k := s.k
	for m := range 32 {
		h := &s.hist[m]
		h[k] = x[m]
		h[k+16] = x[m]
	}
	{
		a := (*[16]float32)(s.hist[16][k : k+16])
		w := &synthLo[0]
		out[0] = (a[0]*w[0] + a[1]*w[1] + a[2]*w[2] + a[3]*w[3]) +
			(a[4]*w[4] + a[5]*w[5] + a[6]*w[6] + a[7]*w[7]) +
			(a[8]*w[8] + a[9]*w[9] + a[10]*w[10] + a[11]*w[11]) +
			(a[12]*w[12] + a[13]*w[13] + a[14]*w[14] + a[15]*w[15])
		b := (*[16]float32)(s.hist[0][k : k+16])
		w = &synthLo[16]
		out[16] = (b[1]*w[1] + b[3]*w[3]) + (b[5]*w[5] + b[7]*w[7]) +
			(b[9]*w[9] + b[11]*w[11]) + (b[13]*w[13] + b[15]*w[15])
	}
	for j := 1; j < 16; j++ {
		a := (*[16]float32)(s.hist[16+j][k : k+16])
		b := (*[16]float32)(s.hist[16-j][k : k+16])
		lo, hi := &synthLo[j], &synthHi[j]
		out[j] = (a[0]*lo[0] + b[1]*lo[1] + a[2]*lo[2] + b[3]*lo[3]) +
			(a[4]*lo[4] + b[5]*lo[5] + a[6]*lo[6] + b[7]*lo[7]) +
			(a[8]*lo[8] + b[9]*lo[9] + a[10]*lo[10] + b[11]*lo[11]) +
			(a[12]*lo[12] + b[13]*lo[13] + a[14]*lo[14] + b[15]*lo[15])
		out[32-j] = (a[0]*hi[0] + b[1]*hi[1] + a[2]*hi[2] + b[3]*hi[3]) +
			(a[4]*hi[4] + b[5]*hi[5] + a[6]*hi[6] + b[7]*hi[7]) +
			(a[8]*hi[8] + b[9]*hi[9] + a[10]*hi[10] + b[11]*hi[11]) +
			(a[12]*hi[12] + b[13]*hi[13] + a[14]*hi[14] + b[15]*hi[15])
	}
}
