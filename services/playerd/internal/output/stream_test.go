package output

import (
	"slices"
	"testing"
)

// deepSink is a device whose buffer of depth frames is always full, as it is
// while the player keeps ahead of it, and which gives back whatever it has
// not played when it can rewind.
type deepSink struct {
	depth, max int // max is what MaxRewind says
	frames     [][2]float64
	rewound    []int
}

func (s *deepSink) Write(f [][2]float64) error { s.frames = append(s.frames, f...); return nil }
func (s *deepSink) Drop() error                { return nil }
func (s *deepSink) Drain() error               { return nil }
func (s *deepSink) Close() error               { return nil }
func (s *deepSink) Rate() int                  { return DefaultRate }
func (s *deepSink) Delay() int                 { return min(len(s.frames), s.depth) }
func (s *deepSink) MaxRewind() int             { return s.max }
func (s *deepSink) Rewind(n int) (int, error) {
	n = min(n, s.Delay())
	s.frames = s.frames[:len(s.frames)-n]
	s.rewound = append(s.rewound, n)
	return n, nil
}

type noSource struct{}

func (noSource) Back(int)                         {}
func (noSource) Next([][2]float64, []float64) int { return 0 }

// The Stream remembers as much as the sink says it can give back, not a
// copied constant: a 32-period buffer is retaken all but one period, and a
// sink that cannot rewind is never asked.
func TestStreamRemembersWhatTheSinkHolds(t *testing.T) {
	for _, tc := range []struct {
		depth, max, want int
	}{
		{32 * PeriodFrames, 32 * PeriodFrames, 31 * PeriodFrames},
		{8 * PeriodFrames, 8 * PeriodFrames, 7 * PeriodFrames},
		{8 * PeriodFrames, 0, 0},
	} {
		sink := &deepSink{depth: tc.depth, max: tc.max}
		s := NewStream(sink)
		for range 40 {
			pre, gains := make([][2]float64, PeriodFrames), make([]float64, PeriodFrames)
			for i := range pre {
				pre[i], gains[i] = [2]float64{1, 1}, 1
			}
			if err := s.Write(pre, gains); err != nil {
				t.Fatal(err)
			}
		}
		retaken, err := s.Retake(0.5, noSource{})
		if err != nil || retaken != (tc.want > 0) {
			t.Errorf("depth %d, MaxRewind %d: Retake = %v, %v", tc.depth, tc.max, retaken, err)
		}
		if tc.want == 0 {
			if len(sink.rewound) != 0 {
				t.Errorf("depth %d, MaxRewind 0: asked to rewind %v", tc.depth, sink.rewound)
			}
			continue
		}
		if !slices.Equal(sink.rewound, []int{tc.want}) {
			t.Errorf("depth %d: rewound %v, want %d", tc.depth, sink.rewound, tc.want)
		}
		if len(sink.frames) != 40*PeriodFrames {
			t.Fatalf("depth %d: %d frames in the device, want %d", tc.depth, len(sink.frames), 40*PeriodFrames)
		}
		for i, f := range sink.frames[len(sink.frames)-tc.want+PeriodFrames:] {
			if f != [2]float64{0.5, 0.5} {
				t.Fatalf("depth %d: frame %d a period after the change is %v, want the new gain, 0.5", tc.depth, i, f)
			}
		}
	}
}

// The ring keeps the newest frames in order however the writes fall on its
// end.
func TestRingKeepsTheNewest(t *testing.T) {
	const size = 16 * PeriodFrames
	r := newRing(size)
	next := 0
	for _, n := range []int{1000, size - 1500, 700, size + 10, 3, 5000} {
		pre, gains := make([][2]float64, n), make([]float64, n)
		for i := range pre {
			pre[i], gains[i] = [2]float64{float64(next), 0}, float64(next)
			next++
		}
		r.add(pre, gains)
		if want := min(next, size); r.n != want {
			t.Fatalf("after %d frames: %d held, want %d", next, r.n, want)
		}
		for i := range r.n {
			j := r.slot(i)
			if want := float64(next - r.n + i); r.pre[j][0] != want || r.gains[j] != want {
				t.Fatalf("after %d frames: frame %d is %v/%v, want %v", next, i, r.pre[j][0], r.gains[j], want)
			}
		}
	}
}
