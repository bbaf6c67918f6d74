package player

import (
	"cmp"
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

// firstSound signals the first audible frame that reaches the device.
type firstSound struct {
	output.Null
	heard chan struct{}
}

func (s *firstSound) Write(f [][2]float64) error {
	for _, fr := range f {
		if fr[0] != 0 {
			select {
			case s.heard <- struct{}{}:
			default:
			}
			break
		}
	}
	return s.Null.Write(f)
}

// BenchmarkCommandToFirstSample measures from POST /api/command's Do to the
// first non-silent sample written to a real-time paced null sink.
func BenchmarkCommandToFirstSample(b *testing.B) {
	f := folderOf(&testing.T{}, "f", 2)
	sink := &firstSound{Null: *output.NewNull(output.DefaultRate), heard: make(chan struct{}, 1)}
	p := New(Config{Catalog: catalog{"f": f}, MaxVolume: 100, StartVolume: 100,
		Open: func(int) (output.Sink, error) { return sink, nil }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx)
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := p.Do(ctx, Command{Action: ActFolder, FolderID: "f"}); err != nil {
			b.Fatal(err)
		}
		<-sink.heard
		total += time.Since(start)
		if _, err := p.Do(ctx, Command{Action: ActStop}); err != nil {
			b.Fatal(err)
		}
		select {
		case <-sink.heard:
		default:
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/first-sample")
}

func BenchmarkStatus(b *testing.B) {
	f := folderOf(&testing.T{}, "f", 2)
	p := New(Config{Catalog: catalog{"f": f}, MaxVolume: 100, StartVolume: 100})
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Status()
	}
}

// fullDevice discards audio but always reports a full 8-period buffer and
// gives back whatever is asked for.
type fullDevice struct{}

func (fullDevice) Write([][2]float64) error  { return nil }
func (fullDevice) Drop() error               { return nil }
func (fullDevice) Drain() error              { return nil }
func (fullDevice) Close() error              { return nil }
func (fullDevice) Delay() int                { return rewBuffer }
func (fullDevice) Rewind(n int) (int, error) { return n, nil }
func (fullDevice) MaxRewind() int            { return rewBuffer }
func (fullDevice) Rate() int                 { return output.DefaultRate }

// BenchmarkVolumeRetake measures a volume change while playing: taking back
// seven periods from the device and writing them again at the new gain.
func BenchmarkVolumeRetake(b *testing.B) {
	p := playedFor(b, fullDevice{}, folderOf(&testing.T{}, "f", 2), 10)
	v := []float64{50, 60}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := p.command(Command{Action: ActVolume, Value: &v[i%2]}); err != nil {
			b.Fatal(err)
		}
	}
}

// discardAt is a device at rate that takes everything at once.
type discardAt struct{ rate int }

func (d discardAt) Write([][2]float64) error { return nil }
func (d discardAt) Drop() error              { return nil }
func (d discardAt) Drain() error             { return nil }
func (d discardAt) Close() error             { return nil }
func (d discardAt) Rate() int                { return d.rate }

// BenchmarkPlay measures what the player spends on each second of a
// 44.1 kHz file (decode, resampling where the output runs at another rate,
// gain, the write), in CPU time of the process per second of audio (GC
// included; steadier than wall time on a busy machine): on an output at
// the file's own rate, and on one that has only 48 kHz, as every output was
// when the player resampled everything to 48 kHz.
func BenchmarkPlay(b *testing.B) {
	for _, file := range []string{"tone.mp3", "tone.flac", "tone.ogg"} {
		for _, dev := range []int{0, 48000} {
			name := file + "/own-rate"
			if dev > 0 {
				name = file + "/48kHz-output"
			}
			b.Run(name, func(b *testing.B) {
				path := filepath.Join("..", "decode", "testdata", file)
				f := library.Folder{ID: "f", Tracks: []library.Track{{ID: "t", Title: "Tone", Path: path}}}
				p := newDirect(b, discardAt{output.DefaultRate}, catalog{"f": f})
				p.cfg.Open = func(rate int) (output.Sink, error) { return discardAt{cmp.Or(dev, rate)}, nil }
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
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
