package output

import "time"

// FadeFrames is the length of the fades that keep starts and stops from
// clicking: 5 ms at 48 kHz, 5.4 ms at 44.1 kHz.
const FadeFrames = 240

// Source is the music a Stream plays, as far as ending it needs to know: the
// frames a fade-out plays are ones the device had not played yet, so the
// source goes back to where the fade began.
type Source interface {
	// Back moves the source back by frames it had given but that were not
	// heard (at most to the start of what it is playing).
	Back(frames int)
	// Next fills pre with the frames that follow, before gain, and gains
	// with the gain of each, without moving on to what plays after the
	// current piece, and reports how many it filled.
	Next(pre [][2]float64, gains []float64) int
}

// Stream wraps a Sink with a memory of the music recently written to it. A
// sink that can take back what it has not played yet (Rewinder) is asked to,
// and the same audio goes out again from that memory: a new gain is heard
// within a period instead of after the whole device buffer (Retake), and a
// pause fades out inside the buffer instead of cutting it (FadeOut). Then
// nothing is asked from the source twice and nothing seeks before the device
// is served again, so a track change inside the buffer costs nothing and no
// slow seek can let the device run dry.
//
// Everything the sink holds has been written through the Stream since the
// sink was last emptied (FadeOut, Drain, or a new sink), so what it has not
// played is the newest audio in the memory. Only one goroutine uses a Stream.
type Stream struct {
	sink  Sink
	rate  int
	delay Delayer  // nil when the sink cannot tell
	rew   Rewinder // nil when it cannot take audio back
	ring  ring     // empty without rew
	out   [][2]float64
	gains []float64 // with out, scratch for retakes and fades

	fill     Filled // nil when the sink paces by blocking in Write
	capacity int    // fill's buffer in frames
	// held estimates the frames fill holds: held at heldAt plus what was
	// written since, less what played since, so that the device is asked
	// (a system call on ALSA) once per batch instead of once per period.
	// -1 means unknown: ask.
	held   int
	heldAt time.Time
}

// NewStream wraps a sink. It remembers as much audio as the sink says it can
// give back.
func NewStream(sink Sink) *Stream {
	s := &Stream{sink: sink, rate: sink.Rate()}
	s.delay, _ = sink.(Delayer)
	size := 0
	if r, ok := sink.(Rewinder); ok && s.delay != nil {
		if size = max(r.MaxRewind(), 0); size > 0 {
			s.rew = r
		}
	}
	s.ring = newRing(size)
	size = max(size, PeriodFrames)
	s.out, s.gains = make([][2]float64, size), make([]float64, size)
	if f, ok := sink.(Filled); ok && f.Capacity() > FillMargin*PeriodFrames {
		s.fill, s.capacity = f, f.Capacity()
	}
	s.held = -1
	return s
}

// Wait reports how long the player may sleep before it writes the next
// period: nothing while the sink has room for a period, else until it holds
// only FillMargin periods. A sink that is not Filled blocks in Write instead, so
// the answer is always zero.
func (s *Stream) Wait(now time.Time) time.Duration {
	if s.fill == nil {
		return 0
	}
	high := s.capacity - PeriodFrames
	if s.held >= 0 && s.guess(now) <= high {
		return 0
	}
	s.held, s.heldAt = s.fill.Delay(), now
	if s.held <= high {
		return 0
	}
	// Rounded up: waking a nanosecond early would find the buffer a frame
	// too full and sleep again.
	frames := time.Duration(s.held - FillMargin*PeriodFrames)
	return (frames*time.Second + time.Duration(s.rate) - 1) / time.Duration(s.rate)
}

// guess is the estimate of the frames the sink holds at now.
func (s *Stream) guess(now time.Time) int {
	played := int(now.Sub(s.heldAt) * time.Duration(s.rate) / time.Second)
	return max(s.held-played, 0)
}

// Write plays music: pre scaled by gains (in place), remembered for Retake
// and FadeOut.
func (s *Stream) Write(pre [][2]float64, gains []float64) error {
	if s.rew != nil {
		s.ring.add(pre, gains)
	}
	return s.write(pre, gains)
}

// WriteOnce plays frames scaled by gains (in place) that are never taken
// back (an announcement, which has its own volume). The music before them
// can then not be taken back either.
func (s *Stream) WriteOnce(frames [][2]float64, gains []float64) error {
	s.ring.reset()
	return s.write(frames, gains)
}

func (s *Stream) write(frames [][2]float64, gains []float64) error {
	if len(frames) == 0 {
		return nil
	}
	scale(frames, gains)
	if s.held >= 0 {
		s.held += len(frames)
	}
	return s.sink.Write(frames)
}

// Drain blocks until everything written has been heard.
func (s *Stream) Drain() error {
	s.held = -1
	s.ring.reset()
	return s.sink.Drain()
}

// Close closes the sink.
func (s *Stream) Close() error { return s.sink.Close() }

// Rate is the sink's rate: what everything written must be at.
func (s *Stream) Rate() int { return s.rate }

// retakable is how many frames may be taken back: what the sink holds beyond
// the period playing, as far as the ring remembers it.
func (s *Stream) retakable() int {
	if s.rew == nil {
		return 0
	}
	return max(0, min(s.delay.Delay()-PeriodFrames, s.ring.n))
}

// takeBack asks the sink to give back up to want of the newest frames it has
// not played (the stream keeps playing the rest) and reports how many it
// gave: the newest that many in the ring.
func (s *Stream) takeBack(want int) (int, error) {
	got, err := s.rew.Rewind(want)
	if err != nil {
		return 0, err
	}
	return max(got, 0), nil
}

// Retake makes a new gain heard within a period: what the sink holds beyond
// the period playing goes out again at target, the gain moving there over one
// period from that of the last frame left queued. It reports whether anything
// was taken back; if not, the sink plays on as it was. Frames taken back that
// could not be written again are given back to src.
//
// The frames are prepared before the sink gives anything back, so that only
// the write itself stands between the two.
func (s *Stream) Retake(target float64, src Source) (bool, error) {
	s.held = -1
	n := s.retakable()
	if n == 0 {
		return false, nil
	}
	out := s.regain(n, target)
	got, err := s.takeBack(n)
	if got == 0 || err != nil {
		return false, err
	}
	if got != n { // the device played on meanwhile: fewer came back
		out = s.regain(got, target)
	}
	for off := 0; off < got; off += PeriodFrames {
		if err := s.sink.Write(out[off:min(off+PeriodFrames, got)]); err != nil {
			src.Back(got - off)
			return true, err
		}
	}
	s.ring.commit(s.gains[:got])
	return true, nil
}

// regain renders the newest n frames of the ring again into s.out, their
// gains (in s.gains) ramping over a period from the gain of the frame before
// them to target.
func (s *Stream) regain(n int, target float64) [][2]float64 {
	first := s.ring.n - n
	g := s.ring.gains[s.ring.slot(max(first-1, 0))]
	out, gains := s.out[:n], s.gains[:n]
	ramp := min(n, PeriodFrames)
	step := (target - g) / float64(ramp)
	for i := range gains {
		if i < ramp {
			g += step
		} else {
			g = target
		}
		gains[i] = g
	}
	for i := range out {
		out[i] = s.ring.pre[s.ring.slot(first+i)]
	}
	scale(out, gains)
	return out
}

// FadeOut ends the sound without a click and leaves src where the fade
// began, so that playing on continues there. With a nil src (no music
// playing) the sink only drops what it holds.
//
// Where the sink can take audio back, the period playing plays on, then a
// fade of the very next frames, then silence, which is dropped once the fade
// has been heard: the wave never jumps to zero, and the sound ends within
// about 26 ms. The fade plays while the stream runs rather than during a
// drain, which some drivers (snd-aloop) do not play faithfully. Elsewhere the
// sink drops what it holds at once and then plays a fade of the audio that
// was not heard, taken from src again.
func (s *Stream) FadeOut(src Source) error {
	s.held = -1
	if src != nil {
		if n := s.retakable(); n > 0 {
			// Prepared before the sink gives anything back, as for Retake.
			end := s.fadeFrom(n)
			got, err := s.takeBack(n)
			if err != nil {
				return err
			}
			if got > 0 {
				if got != n {
					end = s.fadeFrom(got)
				}
				return s.fadeTaken(got, end, src)
			}
		}
	}
	unheard := 0
	if s.delay != nil {
		unheard = s.delay.Delay()
	}
	s.ring.reset()
	if err := s.sink.Drop(); err != nil {
		return err
	}
	if src == nil {
		return nil
	}
	src.Back(unheard)
	buf, gains := s.out[:FadeFrames], s.gains[:FadeFrames]
	clear(buf)
	n := src.Next(buf, gains)
	scale(buf[:n], gains[:n])
	fadeOut(buf[:n])
	src.Back(n)
	if n == 0 {
		return nil
	}
	err := s.sink.Write(buf[:n])
	if err == nil {
		err = s.sink.Drain()
	}
	if err == nil {
		err = s.sink.Drop()
	}
	return err
}

// fadeFrom prepares the end of the sound for when the sink gives back the
// newest n frames: the first few of them at their gain fading to zero, then
// silence for the rest of a period.
func (s *Stream) fadeFrom(n int) [][2]float64 {
	first := s.ring.n - n
	buf := s.out[:PeriodFrames]
	clear(buf)
	fade := buf[:min(n, FadeFrames)]
	for i := range fade {
		j := s.ring.slot(first + i)
		g := s.ring.gains[j]
		fade[i] = [2]float64{s.ring.pre[j][0] * g, s.ring.pre[j][1] * g}
	}
	fadeOut(fade)
	return buf
}

// fadeTaken ends the sound after a takeBack of got frames with end, what
// fadeFrom(got) prepared, and drops the silence behind the fade once the
// device has played it.
func (s *Stream) fadeTaken(got int, end [][2]float64, src Source) error {
	s.ring.reset()
	err := s.sink.Write(end)
	if err == nil {
		s.playedDown(len(end) - min(got, FadeFrames))
		err = s.sink.Drop()
	}
	// Only now, with the fade heard: a seek can take longer than the one
	// period the device had left.
	src.Back(got)
	return err
}

// playedDown waits until the sink holds no more than frames unplayed, for at
// most a buffer's time. It asks the device rather than trusting a sleep.
func (s *Stream) playedDown(frames int) {
	deadline := time.Now().Add(time.Duration(len(s.ring.pre)) * time.Second / time.Duration(s.rate))
	for {
		wait := s.delay.Delay() - frames
		if wait <= 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(max(time.Millisecond, time.Duration(wait)*time.Second/time.Duration(s.rate)))
	}
}

// ring remembers the music most recently written, as it was before gain,
// and the gain each frame got.
type ring struct {
	pre   [][2]float64
	gains []float64
	start int // index of the oldest frame
	n     int // frames held
}

func newRing(size int) ring {
	return ring{pre: make([][2]float64, size), gains: make([]float64, size)}
}

// add appends frames with their gains; the oldest fall out. It runs for
// every period played, so it copies in at most two runs.
func (r *ring) add(pre [][2]float64, gains []float64) {
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

func (r *ring) reset() { r.start, r.n = 0, 0 }

// slot maps i, counted from the oldest frame held, to its index in the ring.
func (r *ring) slot(i int) int { return (r.start + i) % len(r.pre) }

// commit replaces the gains of the newest len(gains) frames.
func (r *ring) commit(gains []float64) {
	for i, g := range gains {
		r.gains[r.slot(r.n-len(gains)+i)] = g
	}
}

func scale(buf [][2]float64, gains []float64) {
	for i, g := range gains {
		buf[i][0] *= g
		buf[i][1] *= g
	}
}

func fadeOut(buf [][2]float64) {
	for i := range buf {
		g := 1 - float64(i+1)/float64(len(buf))
		buf[i][0] *= g
		buf[i][1] *= g
	}
}
