package mp3

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The fast transforms against the standard's formulas, computed directly
// in float64.

func close32(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestDCT32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		var x, X [32]float32
		for i := range x {
			x[i] = float32(r.Float64()*2 - 1)
		}
		dct32(&x, &X)
		want := make([]float64, 32)
		for m := range 32 {
			for k := range 32 {
				want[m] += float64(x[k]) * math.Cos(float64((2*k+1)*m)*math.Pi/64)
			}
		}
		close32(t, "dct32", X[:], want, 1e-5)
	}
}

func TestDCT4x18(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		var x, z [18]float32
		for i := range x {
			x[i] = float32(r.Float64()*2 - 1)
		}
		dct4x18(&x, &z)
		want := make([]float64, 18)
		for n := range 18 {
			for k := range 18 {
				want[n] += float64(x[k]) * math.Cos(math.Pi/18*(float64(n)+0.5)*(float64(k)+0.5))
			}
		}
		close32(t, "dct4x18", z[:], want, 1e-5)
	}
}

// imdctDirect is 2.4.3.4.10.2 as written: x[i] = Σ X[k]·cos(π/2n·(2i+1+n/2)(2k+1)).
func imdctDirect(in []float64, n int) []float64 {
	out := make([]float64, n)
	for i := range n {
		for k := range n / 2 {
			out[i] += in[k] * math.Cos(math.Pi/float64(2*n)*float64(2*i+1+n/2)*float64(2*k+1))
		}
	}
	return out
}

func rawWindow(bt, i int) float64 {
	long := math.Sin(math.Pi / 36 * (float64(i) + 0.5))
	switch bt {
	case blockStart:
		switch {
		case i < 18:
			return long
		case i < 24:
			return 1
		case i < 30:
			return math.Sin(math.Pi / 12 * (float64(i-18) + 0.5))
		}
		return 0
	case blockStop:
		switch {
		case i < 6:
			return 0
		case i < 12:
			return math.Sin(math.Pi / 12 * (float64(i-6) + 0.5))
		case i < 18:
			return 1
		}
		return long
	}
	return long
}

func TestIMDCT36(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, bt := range []int{blockNormal, blockStart, blockStop} {
		var prev [18]float32
		prevWant := make([]float64, 18)
		for range 5 {
			var x [18]float32
			in := make([]float64, 18)
			for i := range x {
				x[i] = float32(r.Float64()*2 - 1)
				in[i] = float64(x[i])
			}
			y := imdctDirect(in, 36)
			want := make([]float64, 18)
			for i := range 18 {
				want[i] = y[i]*rawWindow(bt, i) + prevWant[i]
				prevWant[i] = y[18+i] * rawWindow(bt, 18+i)
			}
			var out [18]float32
			imdct36(&x, &prev, &imdctWindows[bt], &out)
			close32(t, "imdct36", out[:], want, 1e-5)
			close32(t, "overlap", prev[:], prevWant, 1e-5)
		}
	}
}

func TestIMDCT12(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var prev [18]float32
	prevWant := make([]float64, 18)
	for range 5 {
		var x [18]float32
		for i := range x {
			x[i] = float32(r.Float64()*2 - 1)
		}
		o := make([]float64, 36)
		for w := range 3 {
			in := make([]float64, 6)
			for k := range 6 {
				in[k] = float64(x[3*k+w])
			}
			y := imdctDirect(in, 12)
			for i := range 12 {
				o[6+6*w+i] += y[i] * math.Sin(math.Pi/12*(float64(i)+0.5))
			}
		}
		want := make([]float64, 18)
		for i := range 18 {
			want[i] = o[i] + prevWant[i]
			prevWant[i] = o[18+i]
		}
		var out [18]float32
		imdct12(&x, &prev, &out)
		close32(t, "imdct12", out[:], want, 1e-5)
		close32(t, "overlap", prev[:], prevWant, 1e-5)
	}
}

// TestSynthesis runs the filter bank of Annex A, Figure A.2, step by step:
// shift V, matrix, build U, window with D, sum. (The window itself is
// checked by the accuracy tests: a wrong sign of D leaves errors near the
// subband edges.)
func TestSynthesis(t *testing.T) {
	d := synthesisWindow()
	r := rand.New(rand.NewPCG(9, 10))
	var s synthesis
	v := make([]float64, 1024)
	for block := range 40 {
		var in [32]float32
		for i := range in {
			in[i] = float32(r.Float64()*2 - 1)
		}
		copy(v[64:], v[:960])
		for i := range 64 {
			v[i] = 0
			for k := range 32 {
				v[i] += math.Cos(float64((16+i)*(2*k+1))*math.Pi/64) * float64(in[k])
			}
		}
		var u [512]float64
		for i := range 8 {
			for j := range 32 {
				u[i*64+j] = v[i*128+j]
				u[i*64+32+j] = v[i*128+96+j]
			}
		}
		want := make([]float64, 32)
		for j := range 32 {
			for i := range 16 {
				want[j] += u[j+32*i] * d[j+32*i]
			}
		}
		var out [32]float32
		s.block(&in, &out)
		for j := range 32 {
			if math.Abs(float64(out[j])-want[j]) > 1e-5 {
				t.Fatalf("block %d sample %d: %v, want %v", block, j, out[j], want[j])
			}
		}
	}
}

// TestWindowTable checks tableb3.go against what Table 3-B.3 is known to
// be: nine-decimal roundings of multiples of 2^-16, D[0] = 0, the peak
// D[256] = 1.144989014, and the window's symmetry about D[256]: D[512-i]
// is -D[i], but D[i] itself where i is a multiple of 64 (the sign of D
// changes from one block of 64 to the next).
func TestWindowTable(t *testing.T) {
	for i, v := range tableB3 {
		k := math.Round(v * 65536)
		if math.Abs(v-k/65536) > 5e-10 {
			t.Errorf("D[%d] = %.9f is no multiple of 2^-16 rounded to nine decimals", i, v)
		}
	}
	if tableB3[0] != 0 || tableB3[256] != 1.144989014 {
		t.Errorf("D[0] = %v, D[256] = %v", tableB3[0], tableB3[256])
	}
	for i := 1; i < 256; i++ {
		want := -tableB3[i]
		if i%64 == 0 {
			want = tableB3[i]
		}
		if got := tableB3[512-i]; got != want {
			t.Errorf("D[%d] = %v, D[%d] = %v: not symmetric", 512-i, got, i, tableB3[i])
		}
	}
}
