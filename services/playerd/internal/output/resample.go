package output

import (
	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/playerd/internal/resample"
)

// resampleQuality matches the player's: Lagrange interpolation over
// 2×4 points.
const resampleQuality = 4

// beepBlock is how many frames the Resampler reads from its source at a
// time; a shorter read means the source ended.
const beepBlock = resample.Block

// resampler converts pushed frames from Rate to a device's rate with a
// Resampler, which pulls. Frames wait in a queue until whole blocks are
// there, and the resampler is asked only for output whose input window is
// complete, so it never sees its source run dry mid-stream. That holds back
// at most a block and the window: about 11 ms.
type resampler struct {
	ratio    float64 // input frames per output frame
	from, to int
	q        queue
	rs       *resample.Resampler
	in, out  int // frames pushed and produced since the last reset
	buf      [][2]float64
}

// queue is the resampler's source: what push appended, read in blocks.
type queue struct{ frames [][2]float64 }

func (q *queue) Stream(samples [][2]float64) (int, bool) {
	n := copy(samples, q.frames)
	q.frames = q.frames[n:]
	return n, true
}

func (q *queue) Err() error { return nil }

func newResampler(from, to int) *resampler {
	r := &resampler{ratio: float64(from) / float64(to), from: from, to: to}
	r.reset()
	return r
}

func (r *resampler) reset() {
	r.q.frames = nil
	r.rs = resample.New(resampleQuality, beep.SampleRate(r.from), beep.SampleRate(r.to), &r.q)
	r.in, r.out = 0, 0
}

// ready is how many output frames the input pushed so far allows: output
// frame p needs input up to int(p*ratio)+quality, read in whole blocks.
func (r *resampler) ready() int {
	limit := r.in / beepBlock * beepBlock
	p := max(r.out, int(float64(limit-resampleQuality-1)/r.ratio)-2)
	for p > r.out && int(float64(p-1)*r.ratio)+resampleQuality+1 > limit {
		p--
	}
	for int(float64(p)*r.ratio)+resampleQuality+1 <= limit {
		p++
	}
	return p - r.out
}

// push returns the output frames the input so far allows; the slice is
// reused by the next call.
func (r *resampler) push(in [][2]float64) [][2]float64 {
	r.q.frames = append(r.q.frames, in...)
	r.in += len(in)
	return r.produce(r.ready())
}

func (r *resampler) produce(n int) [][2]float64 {
	if cap(r.buf) < n {
		r.buf = make([][2]float64, n)
	}
	k, _ := r.rs.Stream(r.buf[:n])
	r.out += k
	return r.buf[:k]
}

// flush returns the rest of the output for the input pushed so far,
// padding the source with silence to complete the last block and window.
func (r *resampler) flush() [][2]float64 {
	want := (r.in*r.to+r.from-1)/r.from - r.out // output frames before the input ends
	r.q.frames = append(r.q.frames, make([][2]float64, 2*beepBlock)...)
	r.in += 2 * beepBlock
	out := append([][2]float64(nil), r.produce(min(want, r.ready()))...)
	r.reset()
	return out
}

// pending is how many input frames are held back, not yet sent on.
func (r *resampler) pending() int {
	return max(0, r.in-r.out*r.from/r.to)
}
