package aac

import "testing"

// ffmpeg's encoder never writes pulse data, so the corpus does not reach
// it: pulses add to the magnitudes of quantized values from a start band
// on (4.6.5), away from zero, and change the dequantized spectrum there.
func TestPulses(t *testing.T) {
	var c ics
	c.info.swb = bands[4].long // 44.1 kHz
	c.info.numSwb = len(c.info.swb) - 1
	c.info.maxSfb = 20
	for k := range 20 {
		c.cb[0][k] = 11
		c.sf[0][k] = 100 // gain 1
	}
	c.pulseStart, c.pulseN = 10, 3
	c.pulseOff = [4]int{2, 5, 31}
	c.pulseAmp = [4]int{3, 1, 15}
	var spec [1024]float32
	start := int(c.info.swb[10])
	c.q[start+2] = 4
	c.q[start+7] = -2
	// start+38 stays 0: a pulse on zero counts as negative.
	if err := c.applyPulses(&spec); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		at   int
		want float32
	}{{start + 2, pow43[7]}, {start + 7, -pow43[3]}, {start + 38, -pow43[15]}} {
		if spec[w.at] != w.want {
			t.Errorf("spec[%d] = %v, want %v", w.at, spec[w.at], w.want)
		}
	}
	c.pulseStart, c.pulseN, c.pulseOff = 48, 4, [4]int{31, 31, 31, 31} // 928+124
	if err := c.applyPulses(&spec); err == nil {
		t.Error("a pulse beyond the spectrum was accepted")
	}
}
