package stream

// ring is the jitter buffer: decoded frames at the device rate, written by
// the network goroutine ahead of the player, which reads them. Frames the
// player has read stay for a while (history), so that what the device had
// not yet played when playback paused can be given back (Source.Back).
// Positions are absolute frame counts; the caller holds the lock.
type ring struct {
	buf [][2]float32
	wr  int64 // frames written
	rd  int64 // frames read
	low int64 // oldest frame that is still audio of this stream
}

func newRing(frames int) ring { return ring{buf: make([][2]float32, frames)} }

func (r *ring) ahead() int { return int(r.wr - r.rd) }

// history is how far rd may move back.
func (r *ring) history() int { return int(r.rd - max(r.low, r.wr-int64(len(r.buf)))) }

// space is how many frames may be written while keeping reserve frames of
// history.
func (r *ring) space(reserve int) int { return len(r.buf) - reserve - r.ahead() }

// write stores frames; the caller checked space.
func (r *ring) write(frames [][2]float64) {
	for _, f := range frames {
		r.buf[r.wr%int64(len(r.buf))] = [2]float32{float32(f[0]), float32(f[1])}
		r.wr++
	}
}

// read fills out with the frames ahead and reports how many.
func (r *ring) read(out [][2]float64) int {
	n := min(len(out), r.ahead())
	for i := range n {
		f := r.buf[(r.rd+int64(i))%int64(len(r.buf))]
		out[i] = [2]float64{float64(f[0]), float64(f[1])}
	}
	r.rd += int64(n)
	return n
}

// back moves the read position back by up to n frames and reports how many.
func (r *ring) back(n int) int {
	n = max(0, min(n, r.history()))
	r.rd -= int64(n)
	return n
}

// reset forgets everything: the stream starts over.
func (r *ring) reset() { r.rd, r.low = r.wr, r.wr }
