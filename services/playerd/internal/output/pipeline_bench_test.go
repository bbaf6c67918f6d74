package output

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gopxl/beep/v2"

	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
	"github.com/storybox/storybox/services/playerd/internal/resample"
)

// discard is a device that accepts everything at once.
type discard struct{ format alsa.Format }

func (d discard) Format() alsa.Format     { return d.format }
func (d discard) Channels() int           { return 2 }
func (d discard) Rate() int               { return DefaultRate }
func (d discard) Write([]byte) error      { return nil }
func (d discard) Drop() error             { return nil }
func (d discard) Drain() error            { return nil }
func (d discard) Delay() (int, error)     { return 0, nil }
func (d discard) Underruns() int          { return 0 }
func (d discard) Rewind(int) (int, error) { return 0, nil }
func (d discard) MaxRewind() int          { return 0 }
func (d discard) Buffer() int             { return 0 }
func (d discard) Close() error            { return nil }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPipeline measures what playing costs the CPU: decode, resample
// to 48 kHz (quality 4, as the player), gain, conversion to S32 and a Write
// per period, with a device that takes everything at once. The metric
// cpu-ms/audio-s is CPU time (all threads, GC included) per second of audio.
// The decode-only runs skip the resampler to show what it costs.
func BenchmarkPipeline(b *testing.B) {
	for _, bc := range []struct {
		file     string
		resample bool
	}{{"tone.mp3", true}, {"tone.flac", true}, {"tone.ogg", true}, {"tone.mp3", false}, {"tone.flac", false}, {"tone.ogg", false}} {
		name := bc.file
		if !bc.resample {
			name += "/decode-only"
		}
		b.Run(name, func(b *testing.B) {
			file := bc.file
			path := filepath.Join("..", "decode", "testdata", file)
			sink := newALSA(discard{format: alsa.S32LE})
			buf := make([][2]float64, PeriodFrames)
			audio := 0.0 // seconds
			cpu0 := cpuTime()
			for b.Loop() {
				dec, format, err := decode.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				var st beep.Streamer = dec
				rate := int(format.SampleRate)
				if bc.resample {
					st, rate = resample.New(4, format.SampleRate, DefaultRate, dec), DefaultRate
				}
				for {
					n, ok := st.Stream(buf)
					for i := range buf[:n] {
						buf[i][0] *= 0.3
						buf[i][1] *= 0.3
					}
					if err := sink.Write(buf[:n]); err != nil {
						b.Fatal(err)
					}
					audio += float64(n) / float64(rate)
					if !ok {
						break
					}
				}
				dec.Close()
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/audio, "cpu-ms/audio-s")
		})
	}
}
