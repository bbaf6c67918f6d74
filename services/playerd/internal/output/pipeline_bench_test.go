package output

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gopxl/beep/v2"

	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
)

// discard is a device that accepts everything at once.
type discard struct{ format alsa.Format }

func (d discard) Format() alsa.Format { return d.format }
func (d discard) Rate() int           { return Rate }
func (d discard) Write([]byte) error  { return nil }
func (d discard) Drop() error         { return nil }
func (d discard) Drain() error        { return nil }
func (d discard) Delay() (int, error) { return 0, nil }
func (d discard) Underruns() int      { return 0 }
func (d discard) Close() error        { return nil }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPipeline measures what playing costs the CPU: decode, resample
// to Rate (quality 4, as the player), gain, conversion to S32 and a Write
// per period, with a device that takes everything at once. The metric
// cpu-ms/audio-s is CPU time (all threads, GC included) per second of audio.
func BenchmarkPipeline(b *testing.B) {
	for _, file := range []string{"tone.mp3", "tone.flac"} {
		b.Run(file, func(b *testing.B) {
			path := filepath.Join("..", "decode", "testdata", file)
			sink := newALSA(discard{format: alsa.S32LE})
			buf := make([][2]float64, PeriodFrames)
			frames := 0
			cpu0 := cpuTime()
			for b.Loop() {
				dec, format, err := decode.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				st := beep.Resample(4, format.SampleRate, Rate, dec)
				for {
					n, ok := st.Stream(buf)
					for i := range buf[:n] {
						buf[i][0] *= 0.3
						buf[i][1] *= 0.3
					}
					if err := sink.Write(buf[:n]); err != nil {
						b.Fatal(err)
					}
					frames += n
					if !ok {
						break
					}
				}
				dec.Close()
			}
			audio := float64(frames) / Rate
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/audio, "cpu-ms/audio-s")
			b.ReportMetric(audio/b.Elapsed().Seconds(), "x-realtime")
		})
	}
}
