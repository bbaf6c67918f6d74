package battery

import "math"

// WarningTone is the low-battery sound: two short falling beeps, stereo
// frames at rate Hz, faded in and out so they do not click.
func WarningTone(rate int) [][2]float64 {
	beep := func(freq float64, d float64) [][2]float64 {
		n := int(d * float64(rate))
		fade := rate / 100 // 10 ms
		out := make([][2]float64, n)
		for i := range out {
			env := 1.0
			if i < fade {
				env = float64(i) / float64(fade)
			} else if n-i < fade {
				env = float64(n-i) / float64(fade)
			}
			v := 0.4 * env * math.Sin(2*math.Pi*freq*float64(i)/float64(rate))
			out[i] = [2]float64{v, v}
		}
		return out
	}
	gap := make([][2]float64, rate/10)
	var pcm [][2]float64
	pcm = append(pcm, beep(880, 0.18)...)
	pcm = append(pcm, gap...)
	pcm = append(pcm, beep(660, 0.3)...)
	return pcm
}
