package decode

import (
	"path/filepath"
	"testing"
)

// BenchmarkDecodeAlone is the floor under what playing a format costs: the
// decoder alone, through Open's containment, into a period-sized buffer and
// nowhere else. ns/audio-s is decoder time per second of audio, to set
// beside perfbench's whole-process CPU per audio second (docs/performance.md).
func BenchmarkDecodeAlone(b *testing.B) {
	for _, file := range []string{"tone.mp3", "tone.flac", "tone.ogg", "tone.opus"} {
		b.Run(file, func(b *testing.B) {
			path := filepath.Join("testdata", file)
			buf := make([][2]float64, 1024)
			frames, rate := 0, 0
			for b.Loop() {
				s, format, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				rate = int(format.SampleRate)
				for {
					n, ok := s.Stream(buf)
					frames += n
					if !ok {
						break
					}
				}
				s.Close()
			}
			audio := float64(frames) / float64(rate)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/audio/1e6, "ms/audio-s")
		})
	}
}
