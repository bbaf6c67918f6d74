package loudness

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMeter is the meter alone on programme-like noise, in ms of CPU
// per second of stereo 44.1 kHz audio (set beside decode's
// BenchmarkDecodeAlone).
func BenchmarkMeter(b *testing.B) {
	const rate = 44100
	r := rand.New(rand.NewPCG(1, 2))
	x := make([][2]float64, rate*10)
	for i := range x {
		v := r.NormFloat64() * 0.1
		x[i] = [2]float64{v, 0.8*v + 0.02*r.NormFloat64()}
	}
	b.ResetTimer()
	for b.Loop() {
		m, _ := NewMeter(rate, 2)
		for i := 0; i < len(x); i += 4096 {
			m.Write(x[i:min(i+4096, len(x))])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10/1e6, "ms/audio-s")
}
