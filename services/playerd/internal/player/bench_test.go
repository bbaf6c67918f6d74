package player

import (
	"context"
	"testing"
	"time"

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
