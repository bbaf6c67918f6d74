package player

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

// BenchmarkPlayNormalize is BenchmarkPlay's own-rate FLAC with loudness
// normalisation off and on: the gain is folded into the one gain stage, so
// on costs what off costs. docs/loudness.md has the figures.
func BenchmarkPlayNormalize(b *testing.B) {
	path := filepath.Join("..", "decode", "testdata", "tone.flac")
	f := library.Folder{ID: "f", Tracks: []library.Track{{ID: "t", Title: "Tone", Path: path}}}
	lv := fakeLevels{tracks: map[string]Level{path: {-6.6, -5.5}}, folders: map[string]Level{"f": {-6.6, -5.5}}}
	for _, mode := range []string{NormalizeOff, NormalizeTrack, NormalizeFolder} {
		b.Run(mode, func(b *testing.B) {
			p := newDirect(b, discardAt{output.DefaultRate}, catalog{"f": f})
			p.cfg.Open = func(rate int) (output.Sink, error) { return discardAt{rate}, nil }
			p.cfg.Normalize, p.cfg.Levels = mode, lv
			audio, cpu0 := 0.0, cpuTime(b)
			for b.Loop() {
				if err := p.command(Command{Action: ActFolder, FolderID: "f"}); err != nil {
					b.Fatal(err)
				}
				audio += p.cur.duration
				for p.state == Playing {
					p.renderPeriod()
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Millisecond)/audio, "cpu-ms/audio-s")
		})
	}
}

// BenchmarkLeveller is what levelling a station costs beside decoding it:
// measuring its short-term loudness and peaks, per second of 48 kHz stereo.
func BenchmarkLeveller(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	second := make([][2]float64, output.DefaultRate)
	for i := range second {
		second[i] = [2]float64{rng.Float64() - 0.5, rng.Float64() - 0.5}
	}
	l := newLeveller(output.DefaultRate)
	audio, cpu0 := 0.0, cpuTime(b)
	for b.Loop() {
		for i := 0; i < len(second); i += output.PeriodFrames {
			l.add(second[i:min(i+output.PeriodFrames, len(second))])
		}
		audio++
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Millisecond)/audio, "cpu-ms/audio-s")
}
