package player

import "math"

// volumeRangeDB is the span of the volume scale: 100 is full scale, 1 is
// 40 dB below it, 0 is silence. Equal steps sound like equal changes, which a
// linear gain does not (half of a linear scale is only 6 dB quieter).
const volumeRangeDB = 40

func gainFor(volume int) float64 {
	if volume <= 0 {
		return 0
	}
	return math.Pow(10, volumeDB(volume)/20)
}

// volumeDB is the gain of a volume of 1..100 in dB: 0 at 100, −0.4 dB a
// step.
func volumeDB(volume int) float64 { return float64(volume-100) * volumeRangeDB / 100 }

func (p *Player) clampVolume(v int) int { return max(p.floor(), min(v, p.maxVolume())) }

// floor is the least volume now: the parent's minimum, unless a cap is
// lower (a cap always wins) or the parental rules ask (their fade goes on
// to silence, then pauses).
func (p *Player) floor() int {
	if p.byRules {
		return 0
	}
	return min(p.cfg.MinVolume, p.maxVolume())
}

// trackJoin is where, in the period being rendered, a track began, and the
// gain the one before it played at.
type trackJoin struct {
	at     int
	before float64
}

// rampMusic fills gains for a period of music, track by track: each plays
// at its own gain (normalisation gives tracks their own). A track that
// plays quieter than the one before starts at its gain on its first frame,
// since a ramp down through its first frames would raise them above it,
// past the true-peak ceiling; a louder one ramps up from the gain before.
func (p *Player) rampMusic(gains []float64) {
	from := 0
	for i, j := range p.joins {
		p.rampGains(gains[from:j.at], j.before)
		from = j.at
		next := p.musicGain()
		if i+1 < len(p.joins) {
			next = p.joins[i+1].before
		}
		p.gain = min(p.gain, next)
	}
	p.rampGains(gains[from:], p.musicGain())
	p.joins = p.joins[:0]
}

// rampGains fills gains with the gain of each frame of the next len(gains)
// frames, moving from the current gain to target over them (no zipper noise
// on volume changes) and fading in after starts.
//
// It runs for every frame played: the gain and fade are kept in locals, not
// in the player's fields, and a steady gain (the usual period) is a fill.
func (p *Player) rampGains(gains []float64, target float64) {
	if p.fadeIn == rampFrames {
		// A fade-in starts from silence: no ramp from an earlier gain (a
		// louder track's before a seek or a start) under it.
		p.gain = target
	}
	g, fade := p.gain, p.fadeIn
	step := (target - g) / float64(len(gains))
	i := 0
	for ; i < len(gains) && fade > 0; i++ {
		g += step
		gains[i] = g * (1 - float64(fade)/rampFrames)
		fade--
	}
	if step == 0 {
		for ; i < len(gains); i++ {
			gains[i] = g
		}
	}
	for ; i < len(gains); i++ {
		g += step
		gains[i] = g
	}
	p.gain, p.fadeIn = target, fade
}
