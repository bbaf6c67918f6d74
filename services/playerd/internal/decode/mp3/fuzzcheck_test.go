package mp3

import (
	"math"
	"testing"
)

// FuzzDecode's check of the output fails on values that are no number and
// on values far beyond full scale, and lets ordinary overshoot pass.
func TestCheckPCM(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		pcm []float32
		bad bool
	}{
		{[]float32{0, 0.5, -1, 1}, false},
		{[]float32{1.5, -3, 1e6}, false},
		{[]float32{0.1, float32(math.NaN())}, true},
		{[]float32{inf}, true},
		{[]float32{0, -inf}, true},
		{[]float32{4.5e15}, true},
		{[]float32{-1.01e9}, true},
	} {
		if err := checkPCM(c.pcm); (err != nil) != c.bad {
			t.Errorf("%v: %v", c.pcm, err)
		}
	}
}
