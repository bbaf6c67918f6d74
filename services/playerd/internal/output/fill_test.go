package output

import (
	"fmt"
	"testing"
	"time"
)

// fillSink is a device with a buffer of capacity frames that plays at
// DefaultRate on a clock the test moves; it counts how often it is asked
// what it holds.
type fillSink struct {
	capacity int
	held     int // at the test's clock
	asked    int
}

func (s *fillSink) Write(f [][2]float64) error { s.held += len(f); return nil }
func (s *fillSink) Drop() error                { s.held = 0; return nil }
func (s *fillSink) Drain() error               { s.held = 0; return nil }
func (s *fillSink) Close() error               { return nil }
func (s *fillSink) Rate() int                  { return DefaultRate }
func (s *fillSink) Delay() int                 { s.asked++; return s.held }
func (s *fillSink) Capacity() int              { return s.capacity }

// play moves the device's clock by d.
func (s *fillSink) play(d time.Duration) {
	s.held = max(0, s.held-int(d*DefaultRate/time.Second))
}

func period() ([][2]float64, []float64) {
	pre, gains := make([][2]float64, PeriodFrames), make([]float64, PeriodFrames)
	for i := range gains {
		gains[i] = 1
	}
	return pre, gains
}

// A Filled sink is filled until it has no room for a period, then the player
// may sleep until only FillMargin periods are left, and it is asked what it
// holds once per batch, not once per period: with the ALSA sink's sixteen
// periods the player wakes about four times a second instead of 47, and a
// device costs one more system call per batch.
func TestStreamFillsInBatches(t *testing.T) {
	for _, periods := range []int{16, 8, FillMargin + 1} {
		t.Run(fmt.Sprint(periods, " periods"), func(t *testing.T) {
			sink := &fillSink{capacity: periods * PeriodFrames}
			s := NewStream(sink)
			now := time.Unix(0, 0)
			periodTime := time.Duration(PeriodFrames) * time.Second / DefaultRate
			var batches []int
			writes := 0
			for range 400 {
				if wait := s.Wait(now); wait > 0 {
					batches = append(batches, writes)
					writes = 0
					if want, got := sink.held-FillMargin*PeriodFrames, int(wait*DefaultRate/time.Second); got < want-1 || got > want {
						t.Fatalf("wait %v with %d frames held, want until %d have played", wait, sink.held, want)
					}
					now = now.Add(wait)
					sink.play(wait)
					continue
				}
				pre, gains := period()
				if err := s.Write(pre, gains); err != nil {
					t.Fatal(err)
				}
				writes++
				if sink.held > sink.capacity {
					t.Fatalf("%d frames written into a buffer of %d", sink.held, sink.capacity)
				}
				// Rendering takes a tenth of a period.
				now = now.Add(periodTime / 10)
				sink.play(periodTime / 10)
			}
			if len(batches) < 10 {
				t.Fatalf("batches %v", batches)
			}
			batch := periods - FillMargin
			for _, n := range batches[1:] {
				if n != batch && n != batch+1 {
					t.Errorf("batches of %v periods, want %d (one more when rendering let a period play)", batches, batch)
					break
				}
			}
			if sink.asked > len(batches)+1 {
				t.Errorf("asked the device %d times in %d batches", sink.asked, len(batches))
			}
		})
	}
}

// After the sink's buffer changed behind the estimate (a fade-out, a
// retake, a drain), the sink is asked again rather than trusted.
func TestStreamAsksAgainAfterAFade(t *testing.T) {
	sink := &fillSink{capacity: 8 * PeriodFrames}
	s := NewStream(sink)
	now := time.Unix(0, 0)
	for s.Wait(now) == 0 {
		pre, gains := period()
		if err := s.Write(pre, gains); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FadeOut(nil); err != nil {
		t.Fatal(err)
	}
	asked := sink.asked
	if wait := s.Wait(now); wait != 0 || sink.asked != asked+1 {
		t.Errorf("after a fade-out: wait %v, asked %d more times", wait, sink.asked-asked)
	}
}

// A sink that paces by blocking in Write is never waited for.
func TestStreamDoesNotWaitForBlockingSinks(t *testing.T) {
	for _, sink := range []Sink{&deepSink{depth: 8 * PeriodFrames, max: 8 * PeriodFrames}, &fillSink{capacity: PeriodFrames}} {
		s := NewStream(sink)
		for range 20 {
			pre, gains := period()
			if err := s.Write(pre, gains); err != nil {
				t.Fatal(err)
			}
			if wait := s.Wait(time.Now()); wait != 0 {
				t.Fatalf("%T: wait %v", sink, wait)
			}
		}
	}
}
