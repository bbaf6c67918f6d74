package loudness

import (
	"fmt"
	"math"

	"github.com/storybox/storybox/services/internal/fault"
)

// ErrFormat reports a sample rate or channel layout the meter cannot weigh.
var ErrFormat = fault.New(fault.Unsupported, "loudness: unsupported format")

// weights are BS.1770-4's channel weights by channel count, in the usual
// order of each layout (L R C LFE Ls Rs for 5.1); the LFE is not weighed.
var weights = map[int][]float64{
	1: {1},
	2: {1, 1},
	3: {1, 1, 1},             // L R C
	4: {1, 1, 1.41, 1.41},    // L R Ls Rs
	5: {1, 1, 1, 1.41, 1.41}, // L R C Ls Rs
	6: {1, 1, 1, 0, 1.41, 1.41},
}

const (
	subBlocks      = 4  // a 400 ms block (momentary) is 4 steps of 100 ms
	shortSubBlocks = 30 // a 3 s window (short-term)
)

// A Meter measures a stream as it is written: the momentary and short-term
// loudness of what it heard last (a leveller's input), and the integrated
// loudness, loudness range and true peak of all of it. It is not safe for
// concurrent use.
//
// Blocks are stepped every 100 ms (75 % overlap of the 400 ms block, and
// 10 short-term values a second for the range, as Tech 3342 asks). A rate
// that is not a multiple of 10 Hz gets steps of alternating whole sample
// counts that add up exactly.
type Meter struct {
	rate     int
	channels int
	weights  []float64
	shelf    biquad
	highpass biquad
	state    [][2]biquadState

	frames int64   // written so far
	subN   int     // samples in the current step
	subZ   float64 // its weighted sum of squares
	steps  int64   // steps completed
	ringZ  [shortSubBlocks]float64
	ringN  [shortSubBlocks]int
	segs   []int                      // the current write's frames per step (segment)
	segZ   []float64                  // and their weighted sums of squares
	kc     [2]struct{ sh, hp biquad } // per channel, for weighStereo

	blocks    []uint32  // block loudness histogram, dense
	blockSums []float64 // each bin's exact sum of powers
	short     []uint32  // short-term loudness histogram, dense

	peak truePeak
}

// NewMeter returns a meter of a stream of rate Hz and channels channels
// (1 to 6, in the order of weights).
func NewMeter(rate, channels int) (*Meter, error) {
	w, ok := weights[channels]
	if !ok || rate < 1000 {
		return nil, fmt.Errorf("%w: %d Hz, %d channels", ErrFormat, rate, channels)
	}
	m := &Meter{rate: rate, channels: channels, weights: w, state: make([][2]biquadState, channels),
		blocks: make([]uint32, bins), blockSums: make([]float64, bins), short: make([]uint32, bins),
		peak: newTruePeak(channels)}
	m.shelf, m.highpass = kWeighting(float64(rate))
	for c := range m.kc {
		m.kc[c].sh, m.kc[c].hp = m.shelf, m.highpass
	}
	return m, nil
}

// stepEnd is the frame count at which step k (0-based) ends.
func (m *Meter) stepEnd(k int64) int64 { return ((k+1)*int64(m.rate) + 5) / 10 }

// Write measures stereo frames (beep's sample type). A mono meter reads the
// left channel only: our decoders hand a mono file over with the channel
// copied to both sides, and BS.1770 counts a mono channel once.
func (m *Meter) Write(samples [][2]float64) {
	if m.channels > 2 {
		panic("loudness: Write on a meter of more than 2 channels; use WriteInterleaved")
	}
	m.segment(len(samples))
	if m.channels == 2 {
		m.weighStereo(samples)
		m.peak.scan(0)
		m.peak.scan(1)
		m.close()
		return
	}
	b := m.peak.buffer(0, len(samples))
	for i, s := range samples {
		b[i] = s[0]
	}
	m.weigh(0, b)
	m.peak.scan(0)
	m.close()
}

// WriteInterleaved measures frames of interleaved samples, one per channel.
func (m *Meter) WriteInterleaved(samples []float64) {
	frames := len(samples) / m.channels
	m.segment(frames)
	for c := range m.channels {
		b := m.peak.buffer(c, frames)
		for i := range b {
			b[i] = samples[i*m.channels+c]
		}
		m.weigh(c, b)
		m.peak.scan(c)
	}
	m.close()
}

// segment splits the next n frames at the ends of 100 ms steps, into
// m.segs, and clears their sums.
func (m *Meter) segment(n int) {
	m.segs, m.segZ = m.segs[:0], m.segZ[:0]
	f, k := m.frames, m.steps
	for left := n; left > 0; {
		take := int(min(int64(left), m.stepEnd(k)-f))
		m.segs = append(m.segs, take)
		m.segZ = append(m.segZ, 0)
		left -= take
		f += int64(take)
		if f == m.stepEnd(k) {
			k++
		}
	}
}

// weigh runs channel c's samples x through the K-weighting and adds their
// weighted squares to each segment's sum. The filters' memory is kept in
// locals over the whole write: this loop is most of the meter's cost.
func (m *Meter) weigh(c int, x []float64) {
	sh, hp, w := m.shelf, m.highpass, m.weights[c]
	st := &m.state[c]
	a1, a2, b1, b2 := st[0].s1, st[0].s2, st[1].s1, st[1].s2
	i := 0
	for j, n := range m.segs {
		var z float64
		for _, v := range x[i : i+n] {
			y := sh.b0*v + a1
			a1 = sh.b1*v - sh.a1*y + a2
			a2 = sh.b2*v - sh.a2*y
			u := hp.b0*y + b1
			b1 = hp.b1*y - hp.a1*u + b2
			b2 = hp.b2*y - hp.a2*u
			z += u * u
		}
		m.segZ[j] += w * z
		i += n
	}
	st[0].s1, st[0].s2, st[1].s1, st[1].s2 = a1, a2, b1, b2
}

// weighStereo is weigh for both channels of a stereo write at once, and
// the copy into the true peak's buffers in the same pass. The two
// channels' filters are independent chains of dependent arithmetic, so
// interleaving them lets the CPU overlap them. Each channel reads its own
// copy of the coefficients (m.kc): the compiler then takes each from
// memory as an operand instead of sharing it between the channels in a
// register, and the filters' memory fits the CPU's registers (shared, the
// coefficients crowded it out to the stack on every sample). Each
// channel's operations and the order of the sums are those of weigh, so
// the results are the same to the bit (TestStereoWriteIsExact).
func (m *Meter) weighStereo(samples [][2]float64) {
	n := len(samples)
	bl, br := m.peak.buffer(0, n), m.peak.buffer(1, n)
	p, r := &m.kc[0], &m.kc[1]
	st0, st1 := &m.state[0], &m.state[1]
	a1, a2, b1, b2 := st0[0].s1, st0[0].s2, st0[1].s1, st0[1].s2
	c1, c2, d1, d2 := st1[0].s1, st1[0].s2, st1[1].s1, st1[1].s2
	w0, w1 := m.weights[0], m.weights[1]
	i := 0
	for j, n := range m.segs {
		var zl, zr float64
		xs, ol, or := samples[i:i+n], bl[i:i+n], br[i:i+n]
		for k, s := range xs {
			v, q := s[0], s[1]
			ol[k], or[k] = v, q
			y := p.sh.b0*v + a1
			x := r.sh.b0*q + c1
			a1 = p.sh.b1*v - p.sh.a1*y + a2
			c1 = r.sh.b1*q - r.sh.a1*x + c2
			a2 = p.sh.b2*v - p.sh.a2*y
			c2 = r.sh.b2*q - r.sh.a2*x
			u := p.hp.b0*y + b1
			t := r.hp.b0*x + d1
			b1 = p.hp.b1*y - p.hp.a1*u + b2
			d1 = r.hp.b1*x - r.hp.a1*t + d2
			b2 = p.hp.b2*y - p.hp.a2*u
			d2 = r.hp.b2*x - r.hp.a2*t
			zl += u * u
			zr += t * t
		}
		m.segZ[j] += w0 * zl
		m.segZ[j] += w1 * zr
		i += n
	}
	st0[0].s1, st0[0].s2, st0[1].s1, st0[1].s2 = a1, a2, b1, b2
	st1[0].s1, st1[0].s2, st1[1].s1, st1[1].s2 = c1, c2, d1, d2
}

// close adds the segments' sums to the steps, closing each step that
// ends.
func (m *Meter) close() {
	for j, n := range m.segs {
		m.subZ += m.segZ[j]
		m.subN += n
		m.frames += int64(n)
		if m.frames == m.stepEnd(m.steps) {
			m.step()
		}
	}
	m.flush()
}

// flush sets the filters' memory to zero once it has decayed below any
// audible size. After digital silence it would otherwise decay on into
// subnormal numbers, whose arithmetic is many times slower on most CPUs
// (it made measuring a file with pauses five times as costly); from 1e-25
// that takes seconds of audio, so once per write is soon enough.
func (m *Meter) flush() {
	for c := range m.state {
		for i := range m.state[c] {
			st := &m.state[c][i]
			if math.Abs(st.s1) < 1e-25 && math.Abs(st.s2) < 1e-25 {
				st.s1, st.s2 = 0, 0
			}
		}
	}
}

// step closes a 100 ms step: it ends a 400 ms block and a 3 s window once
// there are enough steps for them.
func (m *Meter) step() {
	i := int(m.steps % shortSubBlocks)
	m.ringZ[i], m.ringN[i] = m.subZ, m.subN
	m.subZ, m.subN = 0, 0
	m.steps++
	if m.steps >= subBlocks {
		if l := m.window(subBlocks); l >= AbsoluteGate {
			b := binOf(l)
			m.blocks[b]++
			m.blockSums[b] += power(l)
		}
	}
	if m.steps >= shortSubBlocks {
		if l := m.window(shortSubBlocks); l >= AbsoluteGate {
			m.short[binOf(l)]++
		}
	}
}

// window is the loudness of the last n complete steps (fewer at the
// start); −∞ for silence or nothing yet.
func (m *Meter) window(n int) float64 {
	var z float64
	var count int
	for k := range min(int64(n), m.steps) {
		i := int((m.steps - 1 - k) % shortSubBlocks)
		z += m.ringZ[i]
		count += m.ringN[i]
	}
	if count == 0 || z == 0 {
		return math.Inf(-1)
	}
	return loudnessOf(z / float64(count))
}

// Momentary is the loudness of the last 400 ms, in LUFS, updated every
// 100 ms; before 400 ms have been written, of what has been; −∞ for
// silence.
func (m *Meter) Momentary() float64 { return m.window(subBlocks) }

// ShortTerm is the loudness of the last 3 s, as Momentary.
func (m *Meter) ShortTerm() float64 { return m.window(shortSubBlocks) }

// Integrated is the gated loudness of everything written, in LUFS, or
// AbsoluteGate when no 400 ms block passes the gates (silence, or less
// than 400 ms).
func (m *Meter) Integrated() float64 { return integrated(m.blocks, m.blockSums) }

// Range is the loudness range in LU (0 with fewer than one 3 s window).
func (m *Meter) Range() float64 { return loudnessRange(m.short) }

// TruePeak is the highest true peak in dBTP over all channels so far, or
// MinPeak for digital silence.
func (m *Meter) TruePeak() float64 { return max(m.peak.dBTP(), MinPeak) }

// Seconds is how much audio was written.
func (m *Meter) Seconds() float64 { return float64(m.frames) / float64(m.rate) }

// Result is everything written so far, for keeping.
func (m *Meter) Result() Result {
	return Result{
		Integrated: m.Integrated(),
		Range:      m.Range(),
		TruePeak:   m.TruePeak(),
		Duration:   m.Seconds(),
		Histogram:  sparse(m.blocks),
		ShortTerm:  sparse(m.short),
	}
}
