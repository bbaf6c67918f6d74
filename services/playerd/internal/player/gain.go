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

func (p *Player) clampVolume(v int) int { return max(0, min(v, p.maxVolume())) }

// rampGains fills gains with the gain of each frame of the next len(gains)
// frames, moving from the current gain to target over them (no zipper noise
// on volume changes) and fading in after starts.
func (p *Player) rampGains(gains []float64, target float64) {
	step := (target - p.gain) / float64(len(gains))
	for i := range gains {
		p.gain += step
		g := p.gain
		if p.fadeIn > 0 {
			g *= 1 - float64(p.fadeIn)/rampFrames
			p.fadeIn--
		}
		gains[i] = g
	}
	p.gain = target
}
