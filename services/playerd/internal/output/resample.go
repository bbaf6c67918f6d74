package output

import "math"

// resampler converts pushed frames from one rate to another for devices
// without Rate. It interpolates with Catmull-Rom splines: cheap, smooth and
// transparent enough for this fallback, since the player's sources are
// already band-limited below 24 kHz. Not anti-aliased when going down
// (48 → 44.1 kHz): content between 22 and 24 kHz, rare in practice, folds back.
type resampler struct {
	step float64      // input frames per output frame
	pos  float64      // position of the next output frame in hist
	hist [][2]float64 // input not yet fully used, one frame of history first
	out  [][2]float64
}

func newResampler(from, to int) *resampler {
	r := &resampler{step: float64(from) / float64(to)}
	r.reset()
	return r
}

func (r *resampler) reset() {
	r.hist = append(r.hist[:0], [2]float64{})
	r.pos = 1
}

// push returns the output frames the input so far allows; the slice is
// reused by the next call.
func (r *resampler) push(in [][2]float64) [][2]float64 {
	r.hist = append(r.hist, in...)
	r.out = r.out[:0]
	for {
		i := int(r.pos)
		if i+2 >= len(r.hist) {
			break
		}
		t := r.pos - float64(i)
		var fr [2]float64
		for c := range fr {
			fr[c] = catmullRom(r.hist[i-1][c], r.hist[i][c], r.hist[i+1][c], r.hist[i+2][c], t)
		}
		r.out = append(r.out, fr)
		r.pos += r.step
	}
	if k := int(r.pos) - 1; k > 0 {
		n := copy(r.hist, r.hist[k:])
		r.hist = r.hist[:n]
		r.pos -= float64(k)
	}
	return r.out
}

// flush pads with silence so the last input frames come out.
func (r *resampler) flush() [][2]float64 {
	out := append([][2]float64(nil), r.push(make([][2]float64, 3))...)
	r.reset()
	return out
}

// pending is how many input frames are held back, not yet sent on.
func (r *resampler) pending() int {
	return max(0, int(math.Ceil(float64(len(r.hist))-r.pos)))
}

func catmullRom(y0, y1, y2, y3, t float64) float64 {
	return y1 + 0.5*t*(y2-y0+t*(2*y0-5*y1+4*y2-y3+t*(3*(y1-y2)+y3-y0)))
}
