package mp3

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// MPEG-1 defines intensity positions 0..6 (2.4.3.4.9.3); a band whose
// position is 7 or more (four-bit scalefactors reach 15) is decoded with
// the frame's other stereo mode: mid/side when it is on, else plain left
// and right. Position 9 would otherwise give tan(9π/12) = -1 and weights
// of 1/(1+tan) ≈ ±4.5e15.
func TestIllegalIntensityIsLeftRight(t *testing.T) {
	for _, tc := range []struct {
		name    string
		modeExt int // with intensity; the reference clears that bit
	}{
		{"intensity", 1},
		{"ms-intensity", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(4) {
				s := genStream{version: 3, sri: 1, bri: 14, mode: modeJoint, modeExt: tc.modeExt, mixed: true, illegalIS: true}
				data, ref := illegalIntensityStream(t, s, seed)
				d, err := NewStream(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				got := decodeAll(t, d)
				if len(got) != len(ref) {
					t.Fatalf("seed %d: %d values, the left/right decoding %d", seed, len(got), len(ref))
				}
				peak := 0.0
				for _, v := range ref {
					peak = max(peak, math.Abs(float64(v)))
				}
				worst, at := 0.0, 0
				for i := range got {
					if math.Abs(float64(got[i])) > peak+1e-6 {
						t.Fatalf("seed %d: value %d is %g, beyond the left/right decoding's peak %g", seed, i, got[i], peak)
					}
					if e := math.Abs(float64(got[i] - ref[i])); e > worst {
						worst, at = e, i
					}
				}
				if worst > 1e-6 {
					t.Errorf("seed %d: differs from the left/right decoding by %g at value %d", seed, worst, at)
				}
			}
		})
	}
}

// illegalIntensityStream writes 40 frames whose right channel is coded
// with intensity positions 7..15 only, lowering the gain until the
// decoding without intensity stereo (the same frames with the intensity
// bit of mode_extension cleared) peaks below 0.8, and returns the frames
// and that decoding.
func illegalIntensityStream(t *testing.T, s genStream, seed uint64) ([]byte, []float32) {
	t.Helper()
	for amp := 0; ; amp += 8 {
		g := &generator{r: rand.New(rand.NewPCG(seed, 34)), s: s, amp: amp}
		data := g.stream(40)
		plain := bytes.Clone(data)
		for off := 0; off+4 <= len(plain); {
			h, ok := parseHeader(uint32(plain[off])<<24 | uint32(plain[off+1])<<16 | uint32(plain[off+2])<<8 | uint32(plain[off+3]))
			if !ok {
				t.Fatalf("no frame at %d", off)
			}
			plain[off+3] &^= 1 << 4 // mode_extension's intensity_stereo bit
			off += h.size
		}
		d, err := NewStream(bytes.NewReader(plain))
		if err != nil {
			t.Fatal(err)
		}
		ref := decodeAll(t, d)
		peak := 0.0
		for _, v := range ref {
			peak = max(peak, math.Abs(float64(v)))
		}
		if peak < 0.8 {
			return data, ref
		}
		if amp > 200 {
			t.Fatalf("seed %d: no gain keeps the stream below full scale", seed)
		}
	}
}
