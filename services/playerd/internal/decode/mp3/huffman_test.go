package mp3

import (
	"math"
	"testing"
)

// Every table of B.7 is a complete prefix code: no code is a prefix of
// another, and the lengths fill the code space exactly (Kraft sum 1). A
// mistyped code or length breaks one or the other.
func TestHuffmanTablesArePrefixCodes(t *testing.T) {
	for n, spec := range huffSpecs {
		if len(spec.codes) != spec.size*spec.size || len(spec.lens) != len(spec.codes) {
			t.Fatalf("table %d: %d codes, %d lengths for %d×%d", n, len(spec.codes), len(spec.lens), spec.size, spec.size)
		}
		sum := 0.0
		for i, c := range spec.codes {
			l := spec.lens[i]
			if l == 0 || l > 19 || uint(c) >= 1<<l {
				t.Fatalf("table %d entry %d: code %d in %d bits", n, i, c, l)
			}
			sum += math.Ldexp(1, -int(l))
			for j, d := range spec.codes {
				m := spec.lens[j]
				if j != i && m <= l && uint(c)>>(l-m) == uint(d) {
					t.Fatalf("table %d: code %d (%d bits) starts with code %d (%d bits)", n, i, l, j, m)
				}
			}
		}
		if sum != 1 {
			t.Errorf("table %d: Kraft sum %v", n, sum)
		}
	}
	sum := 0.0
	for v := range 16 {
		sum += math.Ldexp(1, -int(quadALens[v]))
	}
	if sum != 1 {
		t.Errorf("count1 table A: Kraft sum %v", sum)
	}
}

// Every pair of every table decodes from its own code.
func TestHuffmanLookup(t *testing.T) {
	for n := range 32 {
		tab := &bigTables[n]
		if tab.lut == nil {
			continue
		}
		spec := huffSpecs[n]
		if n >= 24 {
			spec = huffSpecs[24]
		} else if n >= 16 {
			spec = huffSpecs[16]
		}
		for i, c := range spec.codes {
			l := uint(spec.lens[i])
			w := uint64(c) << (64 - l)
			e := tab.lut[w>>(64-tab.firstBits)]
			used := tab.firstBits
			for e&lutPointer != 0 {
				sub := uint(e >> 16 & 31)
				e = tab.lut[int(e&0xffff)+int(w<<used>>(64-sub))]
				used += sub
			}
			if got, want := e&0xff, uint32(i/spec.size<<4|i%spec.size); got != want || uint(e>>8&31) != l {
				t.Fatalf("table %d: code %d decodes as %#x (%d bits), want %#x (%d bits)", n, i, got, e>>8&31, want, l)
			}
		}
	}
}
