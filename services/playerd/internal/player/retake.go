package player

import (
	"time"

	"github.com/storybox/storybox/services/playerd/internal/output"
)

// recentFrames is how much written audio the player remembers: the largest
// device buffer the ALSA sink negotiates (16 periods).
const recentFrames = 16 * output.PeriodFrames

// recent remembers the music most recently written to the sink, as it was
// before gain, and the gain each frame got. A volume change takes back what
// the device has not played yet and writes the same audio again at the new
// gain (retake), so it is heard within a period instead of after the whole
// device buffer, without asking the decoders for anything twice: a track
// change inside the buffer costs nothing, and no seek can stall the device.
type recent struct {
	pre   [][2]float64
	gains []float64
	start int // index of the oldest frame
	n     int // frames held
}

func newRecent() recent {
	return recent{pre: make([][2]float64, recentFrames), gains: make([]float64, recentFrames)}
}

// add appends frames with their gains; the oldest fall out. It runs for
// every period played, so it copies in at most two runs.
func (r *recent) add(pre [][2]float64, gains []float64) {
	size := len(r.pre)
	if len(pre) > size {
		pre, gains = pre[len(pre)-size:], gains[len(gains)-size:]
	}
	for len(pre) > 0 {
		j := (r.start + r.n) % size
		k := copy(r.pre[j:], pre)
		copy(r.gains[j:], gains[:k])
		pre, gains = pre[k:], gains[k:]
		r.n += k
		if r.n > size {
			r.start = (r.start + r.n - size) % size
			r.n = size
		}
	}
}

func (r *recent) reset() { r.start, r.n = 0, 0 }

// slot maps i, counted from the oldest frame held, to its index in the ring.
func (r *recent) slot(i int) int { return (r.start + i) % len(r.pre) }

// takeBack asks the sink to give back up to want of the newest frames it has
// not played (the stream keeps playing the rest) and reports how many it gave:
// the newest that many in recent.
func (p *Player) takeBack(want int) int {
	rw, ok := p.sink.(output.Rewinder)
	if !ok || want <= 0 {
		return 0
	}
	got, err := rw.Rewind(want)
	if err != nil {
		p.deviceFailed(err)
		return 0
	}
	return max(got, 0)
}

// retakable is how many frames takeBack may ask for: what the sink holds
// beyond one period, as far as recent remembers it. Everything the sink can
// still hold was written by renderPeriod's music path since the sink was last
// emptied (silence drops it, announcements end with a drain, a new sink
// starts empty), so its unplayed frames are the newest ones in recent.
func (p *Player) retakable() int {
	d, ok := p.sink.(output.Delayer)
	_, ok2 := p.sink.(output.Rewinder)
	if !ok || !ok2 || p.state != Playing || p.cur == nil || len(p.clips) > 0 {
		return 0
	}
	return max(0, min(d.Delay()-output.PeriodFrames, p.recent.n))
}

// retake makes a volume change heard within a period: the frames taken back
// go out again from recent, their gain moving from what the device is left
// playing to the new target over one period, as every volume change ramps.
// They are prepared before the device gives anything back, so that only the
// write itself stands between the two.
func (p *Player) retake() {
	n := p.retakable()
	if n == 0 {
		return
	}
	gain, fadeIn := p.gain, p.fadeIn
	out := p.regain(n)
	got := p.takeBack(n)
	if got == 0 { // the buffer stays as it is: the next period ramps as usual
		p.gain, p.fadeIn = gain, fadeIn
		return
	}
	if got != n { // the device played on meanwhile: fewer came back
		out = p.regain(got)
	}
	for off := 0; off < got; off += output.PeriodFrames {
		if err := p.sink.Write(out[off:min(off+output.PeriodFrames, got)]); err != nil {
			// The decoder is past what did not reach the device: go back
			// for it (within the current track) once the device returns.
			p.rewind(got - off)
			p.deviceFailed(err)
			return
		}
	}
	p.recent.commit(p.retakeGains[:got])
}

// regain renders the newest n frames of recent again at the current volume,
// ramping from the gain of the frame before them, into p.retakeBuf; their
// gains go to p.retakeGains, for recent once they are written.
func (p *Player) regain(n int) [][2]float64 {
	first := p.recent.n - n
	p.gain = p.recent.gains[p.recent.slot(max(first-1, 0))]
	p.fadeIn = 0 // a fade-in still in the buffer: the ramp from its gain replaces it
	target := gainFor(p.volume)
	out, gains := p.retakeBuf[:n], p.retakeGains[:n]
	for off := 0; off < n; off += output.PeriodFrames {
		p.rampGains(gains[off:min(off+output.PeriodFrames, n)], target)
	}
	for i := range out {
		out[i] = p.recent.pre[p.recent.slot(first+i)]
	}
	scale(out, gains)
	return out
}

// commit replaces the gains of the newest len(gains) frames.
func (r *recent) commit(gains []float64) {
	for i, g := range gains {
		r.gains[r.slot(r.n-len(gains)+i)] = g
	}
}

// fadeFrom prepares, in p.buf, the end of the sound for when the device
// gives back the newest n frames: the first few of them fading to zero, then
// silence for the rest of a period.
func (p *Player) fadeFrom(n int) [][2]float64 {
	first := p.recent.n - n
	buf := p.buf[:output.PeriodFrames]
	clear(buf)
	fade := buf[:min(n, rampFrames)]
	for i := range fade {
		j := p.recent.slot(first + i)
		g := p.recent.gains[j]
		fade[i] = [2]float64{p.recent.pre[j][0] * g, p.recent.pre[j][1] * g}
	}
	fadeOut(fade)
	return buf
}

// fadeOutTaken ends the sound after a takeBack of got frames with end, what
// fadeFrom(got) prepared. Once the device has played the fade, the silence
// behind it is dropped. The wave never jumps to zero, as it does when a drop
// cuts it, and the track is left where the fade began. The fade plays while
// the stream runs rather than during a drain, which some drivers (snd-aloop)
// do not play faithfully.
func (p *Player) fadeOutTaken(got int, end [][2]float64) {
	p.recent.reset()
	err := p.sink.Write(end)
	if err == nil {
		p.playedDown(len(end) - min(got, rampFrames))
		err = p.sink.Drop()
	}
	// Only now, with the fade heard: a seek can take longer than the one
	// period the device had left.
	p.rewind(got)
	if err != nil {
		p.deviceFailed(err)
	}
}

// playedDown waits until the sink holds no more than frames unplayed, for at
// most a buffer's time. It asks the device rather than trusting a sleep.
func (p *Player) playedDown(frames int) {
	d, ok := p.sink.(output.Delayer)
	if !ok {
		return
	}
	deadline := time.Now().Add(time.Duration(recentFrames) * time.Second / output.Rate)
	for {
		wait := d.Delay() - frames
		if wait <= 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(max(time.Millisecond, time.Duration(wait)*time.Second/output.Rate))
	}
}
