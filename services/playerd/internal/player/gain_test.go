package player

import "testing"

// TestRampGains: the gains of a period, ramping, fading in, both or steady,
// are the per-frame sums they were when every frame stepped the player's
// own fields.
func TestRampGains(t *testing.T) {
	reference := func(gain float64, fadeIn int, n int, target float64) ([]float64, int) {
		out := make([]float64, n)
		if fadeIn == rampFrames {
			gain = target
		}
		step := (target - gain) / float64(n)
		for i := range out {
			gain += step
			g := gain
			if fadeIn > 0 {
				g *= 1 - float64(fadeIn)/rampFrames
				fadeIn--
			}
			out[i] = g
		}
		return out, fadeIn
	}
	for _, c := range []struct {
		gain, target float64
		fadeIn, n    int
	}{
		{0.5, 0.5, 0, 1024}, {0.5, 0.25, 0, 1024}, {0.5, 0.5, rampFrames, 1024}, {0, 1, rampFrames, 100},
		{0.3, 0.7, 10, 1024}, {1, 1, 1024 + 5, 1024}, {0.2, 0.2, 1, 1},
	} {
		p := &Player{gain: c.gain, fadeIn: c.fadeIn}
		got := make([]float64, c.n)
		p.rampGains(got, c.target)
		want, fade := reference(c.gain, c.fadeIn, c.n, c.target)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: frame %d: %v, want %v", c, i, got[i], want[i])
			}
		}
		if p.gain != c.target || p.fadeIn != fade {
			t.Fatalf("%+v: left gain %v fade %d, want %v %d", c, p.gain, p.fadeIn, c.target, fade)
		}
	}
}
