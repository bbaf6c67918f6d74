package aac

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestIMDCT checks the fast transform against the definition of 4.6.18.
func TestIMDCT(t *testing.T) {
	for _, m := range []int{1024, 128} {
		x := make([]float32, m)
		r := rand.New(rand.NewPCG(1, uint64(m)))
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		got := make([]float32, 2*m)
		newIMDCT(m).run(x, got, 1)
		n := 2 * m
		n0 := (float64(n)/2 + 1) / 2
		worst := 0.0
		for i := range n {
			var want float64
			for k := range m {
				want += float64(x[k]) * math.Cos(2*math.Pi/float64(n)*(float64(i)+n0)*(float64(k)+0.5))
			}
			worst = max(worst, math.Abs(want-float64(got[i])))
		}
		if worst > 1e-3 {
			t.Errorf("M=%d: off by up to %g", m, worst)
		}
	}
}

// TestTables checks the transcribed tables: each Huffman codebook is
// complete and prefix-free (a mistyped codeword breaks one or the other),
// and the band tables have the standard's band counts.
func TestTables(t *testing.T) {
	check := func(name string, codes []uint32, lens []uint8) {
		var kraft float64
		for i := range codes {
			kraft += math.Exp2(-float64(lens[i]))
			for j := range codes {
				if i == j || lens[j] < lens[i] {
					continue
				}
				if codes[j]>>(lens[j]-lens[i]) == codes[i] {
					t.Errorf("%s: code %d is a prefix of code %d", name, i, j)
				}
			}
		}
		if kraft != 1 {
			t.Errorf("%s: Kraft sum %v", name, kraft)
		}
	}
	check("scalefactors", sfCodes[:], sfBits[:])
	for i, cs := range specCodes {
		codes := make([]uint32, len(cs))
		for j, c := range cs {
			codes[j] = uint32(c)
		}
		check(fmt.Sprintf("codebook %d", i+1), codes, specBits[i])
	}
	long := []int{41, 41, 47, 49, 49, 51, 47, 47, 43, 43, 43, 40, 40}
	short := []int{12, 12, 12, 14, 14, 14, 15, 15, 15, 15, 15, 15, 15}
	for i, b := range bands {
		if len(b.long)-1 != long[i] || len(b.short)-1 != short[i] || b.long[len(b.long)-1] != 1024 || b.short[len(b.short)-1] != 128 {
			t.Errorf("rate %d: %d long and %d short bands", sampleRates[i], len(b.long)-1, len(b.short)-1)
		}
	}
}
