package player

import (
	"fmt"
	"math"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

// rewSink is a device whose buffer of 8 periods is always full, as it is
// while the player keeps ahead of it, and which can take back what it has
// not played (ALSA's rewind). frames ends up as what the speaker plays.
type rewSink struct {
	recSink
	held    int // frames beyond the playing period it cannot give back (a FIFO)
	rewound []int
}

const rewBuffer = 8 * output.PeriodFrames

func (s *rewSink) MaxRewind() int { return rewBuffer }

func (s *rewSink) Delay() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return min(len(s.frames), rewBuffer)
}

func (s *rewSink) Rewind(n int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := max(0, min(n, len(s.frames), rewBuffer-output.PeriodFrames)-s.held)
	s.frames = s.frames[:len(s.frames)-m]
	s.rewound = append(s.rewound, m)
	return m, nil
}

// newDirect is a player driven from the test goroutine itself, without Run,
// so the test decides exactly when each period is rendered.
func newDirect(t testing.TB, sink output.Sink, cat catalog) *Player {
	t.Helper()
	p := New(Config{Open: func(int) (output.Sink, error) { return sink, nil }, Catalog: cat, MaxVolume: 100, StartVolume: 100})
	p.ensureSink()
	t.Cleanup(func() { p.shutdown() })
	return p
}

// playedFor starts folder f on a direct player and renders periods of it.
func playedFor(t testing.TB, sink output.Sink, f library.Folder, periods int) *Player {
	t.Helper()
	p := newDirect(t, sink, catalog{f.ID: f})
	if err := p.command(Command{Action: ActFolder, FolderID: f.ID}); err != nil {
		t.Fatal(err)
	}
	p.renderPeriods(periods)
	return p
}

func (p *Player) renderPeriods(n int) {
	for range n {
		p.renderPeriod()
	}
}

// A volume change reaches into the device buffer: everything but the period
// being played is taken back and written again at the new gain, ramping
// without a jump, and not a sample is lost or repeated, even across a track
// change inside the buffer.
func TestVolumeChangeRetakesTheDeviceBuffer(t *testing.T) {
	// Track a is 4800 frames: the retake below starts inside it and reaches
	// into track b. A device that gives back less, or nothing, still plays
	// every frame once and ramps without a jump.
	for _, held := range []int{0, 100, rewBuffer - output.PeriodFrames} {
		t.Run(fmt.Sprint("held=", held), func(t *testing.T) { retakeVolume(t, held) })
	}
}

func retakeVolume(t *testing.T, held int) {
	f := folderOf(t, "f", 0.1, 2)
	sink := &rewSink{held: held}
	p := playedFor(t, sink, f, 10)
	written := 10 * output.PeriodFrames
	if err := p.command(Command{Action: ActVolume, Value: val(50)}); err != nil {
		t.Fatal(err)
	}
	if err := p.command(Command{Action: ActVolume, Value: val(80)}); err != nil {
		t.Fatal(err)
	}
	p.renderPeriods(10)

	back := rewBuffer - output.PeriodFrames - held
	keep := written - back // the period left playing, and what was held
	if len(sink.rewound) != 2 || sink.rewound[0] != back || sink.rewound[1] != back {
		t.Fatalf("rewound %v, want %d twice: all but one period and what is held", sink.rewound, back)
	}
	heard := sink.heard()
	if want := 20 * output.PeriodFrames; len(heard) != want {
		t.Fatalf("%d frames played, want %d", len(heard), want)
	}
	prev := 0.0
	for i, fr := range heard {
		level, counter := 1000.0, i%1000
		if i >= 4800 {
			level, counter = 2000, (i-4800)%1000
		}
		g := fr[0] * 32768 / level
		if i > rampFrames { // after the fade-in at the start
			if math.Abs(g-prev) > 0.9/output.PeriodFrames+1e-9 {
				t.Fatalf("frame %d: gain jumps from %.5f to %.5f (a click)", i, prev, g)
			}
			if c := int(math.Round(fr[1]/fr[0]*level/30)) % 1000; c != counter {
				t.Fatalf("frame %d: sample %d of its track, want %d (lost or repeated audio)", i, c, counter)
			}
		}
		prev = g
		switch {
		case i >= rampFrames && i < keep && math.Abs(g-1) > 1e-9:
			t.Fatalf("frame %d, before the change: gain %.5f, want 1", i, g)
		case i == keep && g > 1-1e-4:
			t.Fatalf("frame %d, the first one after the period left playing: gain %.5f, not lower", i, g)
		case i >= keep+output.PeriodFrames && math.Abs(g-gainFor(80)) > 1e-9:
			t.Fatalf("frame %d, a period after the change: gain %.5f, want %.5f", i, g, gainFor(80))
		}
	}
}

// Nothing is taken back while nothing can be: when the volume stays, or
// during an announcement (beyond the fade-out that makes room for it).
func TestVolumeRetakeOnlyWhilePlayingMusic(t *testing.T) {
	sink := &rewSink{}
	p := playedFor(t, sink, folderOf(t, "f", 2), 10)
	if err := p.command(Command{Action: ActVolume, Value: val(100)}); err != nil {
		t.Fatal(err)
	}
	if len(sink.rewound) != 0 {
		t.Errorf("rewound %v for the same volume", sink.rewound)
	}
	if err := p.enqueueClip(&clip{done: make(chan struct{}), started: make(chan struct{}), pcm: make([][2]float64, 3*output.PeriodFrames)}); err != nil {
		t.Fatal(err)
	}
	p.renderPeriods(2)
	if err := p.command(Command{Action: ActVolume, Value: val(40)}); err != nil {
		t.Fatal(err)
	}
	if len(sink.rewound) != 1 {
		t.Errorf("rewound %v: want only the fade-out before the announcement", sink.rewound)
	}
}

// Pause keeps one period, fades out over the next frames instead of cutting
// the wave, drops the silence after the fade, and play continues with the
// very sample where the fade began.
func TestPauseFadesOutInsideTheBuffer(t *testing.T) {
	for _, held := range []int{0, 100} {
		t.Run(fmt.Sprint("held=", held), func(t *testing.T) { pauseFade(t, held) })
	}
}

func pauseFade(t *testing.T, held int) {
	sink := &rewSink{held: held}
	p := playedFor(t, sink, folderOf(t, "f", 2), 10)
	if err := p.command(Command{Action: ActPause}); err != nil {
		t.Fatal(err)
	}
	keep := 10*output.PeriodFrames - rewBuffer + output.PeriodFrames + held
	heard := sink.heard()
	if len(heard) != keep+output.PeriodFrames || sink.drops != 1 || sink.drains != 0 {
		t.Fatalf("after pause: %d frames, %d drops, %d drains; want %d+%d (fade, then silence), one drop, no drain",
			len(heard), sink.drops, sink.drains, keep, output.PeriodFrames)
	}
	for i := keep - 1; i < len(heard); i++ {
		want := max(0, 1-float64(i-keep+1)/rampFrames) * 1000 / 32768
		if i < keep {
			want = 1000.0 / 32768
		}
		if math.Abs(heard[i][0]-want) > 1e-9 {
			t.Fatalf("frame %d: level %.6f, want %.6f", i, heard[i][0], want)
		}
		if c := int(math.Round(heard[i][1]/heard[i][0]*1000/30)) % 1000; want > 0 && c != i%1000 {
			t.Fatalf("frame %d: sample %d, want %d", i, c, i%1000)
		}
	}
	if pos := p.cur.base + p.cur.frames; pos != keep {
		t.Errorf("paused at frame %d, want %d, where the fade began", pos, keep)
	}
	if err := p.command(Command{Action: ActPlay}); err != nil {
		t.Fatal(err)
	}
	p.renderPeriods(1)
	heard = sink.heard()
	if c := counter(heard[keep+output.PeriodFrames+rampFrames]); c != (keep+rampFrames)%1000 {
		t.Errorf("after the fade-in play is at sample %d, want %d", c, (keep+rampFrames)%1000)
	}
}
