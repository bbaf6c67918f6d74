package player

import (
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

func modeOf(modes map[string]Mode) func(string) Mode {
	return func(id string) Mode { return modes[id] }
}

// latest is the last state the player handed to its saver.
func (h *harness) latest() state.Saved {
	var last state.Saved
	for len(h.saved) > 0 {
		last = <-h.saved
	}
	return last
}

func isPerm(o []int, n int) bool {
	s := slices.Clone(o)
	slices.Sort(s)
	for i := range s {
		if s[i] != i {
			return false
		}
	}
	return len(s) == n
}

// Over many seeds: every track exactly once per cycle, and a new cycle does
// not begin with the track that ended the last one.
func TestShuffleEveryTrackOncePerCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 7
		f := folderOf(t, "f", 6, 6, 6, 6, 6, 6, 6)
		for seed := range uint64(25) {
			h := newHarness(t, catalog{"f": f}, Config{Rand: rand.NewPCG(seed, 1)}, &recSink{perWrite: 2 * time.Millisecond})
			st := h.do(Command{Action: ActFolder, FolderID: "f", Mode: ModeShuffle})
			if !st.Shuffle || st.Repeat != RepeatOff || st.Mode != ModeShuffle {
				t.Fatalf("shuffle folder: %+v", st)
			}
			h.do(Command{Action: ActRepeat, Word: RepeatFolder})
			h.do(Command{Action: ActPause})
			played := []int{st.Index}
			for range 3*n - 1 {
				played = append(played, h.do(Command{Action: ActNext}).Index)
			}
			for c := range 3 {
				if cycle := played[c*n : (c+1)*n]; !isPerm(cycle, n) {
					t.Fatalf("seed %d: cycle %d is %v, not each track once", seed, c, cycle)
				}
				if c > 0 && played[c*n] == played[c*n-1] {
					t.Errorf("seed %d: cycle %d begins with the track that ended the last: %v", seed, c, played)
				}
			}
			h.stop()
		}
	})
}

// A shuffled queue that plays to its end hears the saved order, gaplessly,
// and then stops (repeat off).
func TestShufflePlaysTheSavedOrderToTheEnd(t *testing.T) {
	sink := &recSink{}
	f := folderOf(t, "f", 0.1, 0.1, 0.1, 0.1)
	h := newHarness(t, catalog{"f": f}, Config{Rand: rand.NewPCG(7, 7), FolderMode: modeOf(map[string]Mode{"f": ModeShuffle})}, sink)
	h.do(Command{Action: ActFolder, FolderID: "f"})
	order := h.latest().Queue.Order
	if !isPerm(order, 4) {
		t.Fatalf("saved order %v", order)
	}
	h.waitFor("end of queue", func(s Status) bool { return s.State == Stopped })
	var heard []int
	for i, fr := range sink.heard() {
		if i < rampFrames {
			continue
		}
		track := int(fr[0]*32768/1000+0.5) - 1
		if len(heard) == 0 || heard[len(heard)-1] != track {
			heard = append(heard, track)
		}
	}
	if !slices.Equal(heard, order) {
		t.Errorf("heard %v, want the saved order %v", heard, order)
	}
	if n := len(sink.heard()); n != 4*4800 {
		t.Errorf("heard %d frames, want 4 tracks of 4800 without a gap", n)
	}
}

// previous in shuffle goes to the track played before, not the one before
// in the folder.
func TestShufflePreviousGoesToTheTrackPlayedBefore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := folderOf(t, "f", 6, 6, 6, 6, 6, 6)
		h := newHarness(t, catalog{"f": f}, Config{Rand: rand.NewPCG(3, 9)}, &recSink{perWrite: 2 * time.Millisecond})
		played := []int{h.do(Command{Action: ActFolder, FolderID: "f", Mode: ModeShuffle}).Index}
		h.do(Command{Action: ActPause})
		for range 4 {
			played = append(played, h.do(Command{Action: ActNext}).Index)
		}
		for i := len(played) - 2; i >= 0; i-- {
			if got := h.do(Command{Action: ActPrevious}).Index; got != played[i] {
				t.Fatalf("previous: index %d, want %d (played %v)", got, played[i], played)
			}
		}
		if st := h.do(Command{Action: ActPrevious}); st.Index != played[0] || st.Position != 0 {
			t.Errorf("previous at the first of the order restarts it: %+v", st)
		}
	})
}

// kill -9 and a restart (the state saved at the last command) continue the
// same order, in the same track.
func TestShuffleOrderSurvivesRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := folderOf(t, "f", 6, 6, 6, 6, 6, 6)
		cat := catalog{"f": f}
		h := newHarness(t, cat, Config{Rand: rand.NewPCG(11, 2)}, &recSink{perWrite: 2 * time.Millisecond})
		h.do(Command{Action: ActFolder, FolderID: "f", Mode: ModeShuffle})
		h.do(Command{Action: ActPause})
		h.do(Command{Action: ActNext})
		at := h.do(Command{Action: ActNext}).Index
		saved := h.latest() // what was on disk at the kill
		order := saved.Queue.Order
		h.stop()
		// Another seed: nothing may be drawn anew.
		h2 := newHarness(t, cat, Config{Rand: rand.NewPCG(99, 99), Restored: saved}, &recSink{perWrite: 2 * time.Millisecond})
		st := h2.p.Status()
		if st.Index != at || !st.Shuffle || st.Mode != ModeShuffle {
			t.Fatalf("after restart: %+v, want shuffled at %d", st, at)
		}
		rest := []int{st.Index}
		for range 3 {
			rest = append(rest, h2.do(Command{Action: ActNext}).Index)
		}
		if !slices.Equal(rest, order[2:]) {
			t.Errorf("after restart played %v, want the rest of the order %v", rest, order[2:])
		}
	})
}

// resume of a shuffled folder, after another folder played, continues its
// order at the track and position it was left in.
func TestShuffleResumeContinuesTheOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := folderOf(t, "f", 10, 10, 10, 10, 10)
		g := folderOf(t, "g", 3)
		modes := modeOf(map[string]Mode{"f": ModeShuffle})
		h := newHarness(t, catalog{"f": f, "g": g}, Config{Rand: rand.NewPCG(5, 5), FolderMode: modes}, &recSink{perWrite: 2 * time.Millisecond})
		h.do(Command{Action: ActFolder, FolderID: "f"})
		h.do(Command{Action: ActPause})
		at := h.do(Command{Action: ActNext}).Index
		order := h.latest().Queue.Order
		h.do(Command{Action: ActSeek, Value: val(6)})
		h.do(Command{Action: ActFolder, FolderID: "g"})
		st := h.do(Command{Action: ActResume, FolderID: "f", ItemIndex: idx(at)})
		if st.Index != at || st.Position < 6 || st.Position > 7 || !st.Shuffle {
			t.Fatalf("resume: %+v, want shuffled at %d, 6 s", st, at)
		}
		h.do(Command{Action: ActPause})
		rest := []int{at}
		for range 3 {
			rest = append(rest, h.do(Command{Action: ActNext}).Index)
		}
		if !slices.Equal(rest, order[1:]) {
			t.Errorf("resumed order %v, want %v", rest, order[1:])
		}
	})
}

// shuffle switched on keeps the track playing and puts every other track
// after it once; switched off, the folder's order goes on from the track.
func TestShuffleSwitchKeepsTheTrack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := folderOf(t, "f", 6, 6, 6, 6, 6)
		h := newHarness(t, catalog{"f": f}, Config{Rand: rand.NewPCG(1, 2)}, &recSink{perWrite: 2 * time.Millisecond})
		h.do(Command{Action: ActResume, FolderID: "f", ItemIndex: idx(2)})
		h.do(Command{Action: ActPause})
		on := true
		if st := h.do(Command{Action: ActShuffle, On: &on}); !st.Shuffle || st.Index != 2 || st.Mode != ModeNormal {
			t.Fatalf("shuffle on: %+v", st)
		}
		played := []int{2}
		for range 4 {
			played = append(played, h.do(Command{Action: ActNext}).Index)
		}
		if !isPerm(played, 5) {
			t.Errorf("after shuffle on: %v, not each track once", played)
		}
		on = false
		h.do(Command{Action: ActShuffle, On: &on})
		if st := h.do(Command{Action: ActPrevious}); st.Index != played[4]-1 && played[4] != 0 {
			t.Errorf("shuffle off: previous went to %d from %d", st.Index, played[4])
		}
	})
}

// repeat track loops the track on the sample after its end.
func TestRepeatOneLoopsSampleExact(t *testing.T) {
	sink := &recSink{}
	f := folderOf(t, "f", 0.2, 0.2)
	h := newHarness(t, catalog{"f": f}, Config{}, sink)
	st := h.do(Command{Action: ActFolder, FolderID: "f", Mode: ModeRepeatOne})
	if st.Repeat != RepeatTrack || st.Mode != ModeRepeatOne {
		t.Fatalf("repeat_one: %+v", st)
	}
	h.waitFor("three loops", func(s Status) bool { return s.Jumps >= st.Jumps+3 })
	h.do(Command{Action: ActPause})
	heard := sink.heard()
	const frames = 9600
	if len(heard) < 3*frames {
		t.Fatalf("heard %d frames", len(heard))
	}
	for i := rampFrames; i < 3*frames; i++ {
		if heard[i][0] != 1000.0/32768 || counter(heard[i]) != i%frames%1000 {
			t.Fatalf("frame %d = %v, want track 0 sample %d", i, heard[i], i%frames)
		}
	}
	if st := h.p.Status(); st.Index != 0 {
		t.Errorf("repeat track moved on to %d", st.Index)
	}
}

// single: a start plays one track and stops at its end; the next start
// plays the next, also after a restart; the last wraps to the first.
func TestSinglePlaysOneTrackPerStart(t *testing.T) {
	sink := &recSink{}
	f := folderOf(t, "f", 0.1, 0.1, 0.1)
	cat := catalog{"f": f}
	cfg := Config{FolderMode: modeOf(map[string]Mode{"f": ModeSingle})}
	h := newHarness(t, cat, cfg, sink)
	for i, want := range []int{0, 1, 2, 0} {
		if i == 2 { // a restart between two starts
			h.stop()
			saved := h.latest()
			h = newHarness(t, cat, Config{FolderMode: cfg.FolderMode, Restored: saved}, sink)
		}
		before := len(sink.heard())
		if st := h.do(Command{Action: ActFolder, FolderID: "f"}); st.Index != want || st.Mode != ModeSingle {
			t.Fatalf("start %d: %+v, want track %d", i, st, want)
		}
		h.waitFor("the end of the track", func(s Status) bool { return s.State == Stopped })
		if n := len(sink.heard()) - before; n != 4800 {
			t.Errorf("start %d heard %d frames, want one track of 4800", i, n)
		}
	}
}

// random_one never plays the track of the start before, and stops at the
// end of the one it plays.
func TestRandomOneNeverRepeatsThePrevious(t *testing.T) {
	sink := &recSink{}
	f := folderOf(t, "f", 0.05, 0.05, 0.05)
	h := newHarness(t, catalog{"f": f}, Config{Rand: rand.NewPCG(4, 4)}, sink)
	prev, seen := -1, map[int]bool{}
	for i := range 50 {
		before := len(sink.heard())
		st := h.do(Command{Action: ActFolder, FolderID: "f", Mode: ModeRandomOne})
		if st.Index == prev {
			t.Fatalf("start %d played track %d again", i, prev)
		}
		prev = st.Index
		seen[prev] = true
		h.waitFor("the end of the track", func(s Status) bool { return s.State == Stopped })
		if n := len(sink.heard()) - before; n != 2400 {
			t.Fatalf("start %d heard %d frames, want one track of 2400", i, n)
		}
	}
	if len(seen) != 3 {
		t.Errorf("50 starts played only %v", seen)
	}
}

// seek_delta is clamped to the track at both ends.
func TestSeekDeltaClampsToTheTrack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := folderOf(t, "f", 10, 10)
		h := newHarness(t, catalog{"f": f}, Config{}, &recSink{perWrite: 2 * time.Millisecond})
		h.fails(Command{Action: ActSeekDelta, Value: val(10)}, fault.Conflict)
		h.do(Command{Action: ActFolder, FolderID: "f"})
		h.do(Command{Action: ActPause})
		h.do(Command{Action: ActSeek, Value: val(2)})
		if st := h.do(Command{Action: ActSeekDelta, Value: val(-10)}); st.Position != 0 || st.Index != 0 {
			t.Errorf("−10 s at 2 s: %+v, want 0", st)
		}
		if st := h.do(Command{Action: ActSeekDelta, Value: val(4.5)}); !near(st.Position, 4.5, 0.001) {
			t.Errorf("+4.5 s: position %v", st.Position)
		}
		if st := h.do(Command{Action: ActSeekDelta, Value: val(100)}); !near(st.Position, 10, 0.001) || st.Index != 0 {
			t.Errorf("+100 s at 4.5 s: %+v, want the end of track 0", st)
		}
		if st := h.do(Command{Action: ActPlay}); st.State != Playing {
			t.Fatalf("play: %+v", st)
		}
		h.waitFor("the next track", func(s Status) bool { return s.Index == 1 })
	})
}

// BenchmarkPersistShuffled measures the per-period check of whether the
// state changed (persist, once after every period while playing) for a
// shuffled queue of 300 tracks: the order must cost nothing per period.
// The same queue in order is the baseline.
func BenchmarkPersistShuffled(b *testing.B) {
	lengths := make([]float64, 300)
	for i := range lengths {
		lengths[i] = 0.01
	}
	f := folderOf(&testing.T{}, "f", lengths...)
	for _, mode := range []Mode{ModeNormal, ModeShuffle} {
		b.Run(string(mode), func(b *testing.B) {
			p := New(Config{Catalog: catalog{"f": f}, MaxVolume: 100, StartVolume: 100, Rand: rand.NewPCG(1, 1)})
			if err := p.startFolder("f", 0, false, mode); err != nil {
				b.Fatal(err)
			}
			p.persist(state.Urgent)
			b.ReportAllocs()
			for b.Loop() {
				p.persist(state.Routine)
			}
		})
	}
}

// repeat folder: after the last track the first follows, gaplessly, and
// the queue plays on.
func TestRepeatFolderLoopsGaplessly(t *testing.T) {
	sink := &recSink{}
	f := folderOf(t, "f", 0.1, 0.1)
	h := newHarness(t, catalog{"f": f}, Config{FolderMode: modeOf(map[string]Mode{"f": ModeRepeat})}, sink)
	if st := h.do(Command{Action: ActFolder, FolderID: "f"}); st.Repeat != RepeatFolder || st.Shuffle {
		t.Fatalf("repeat: %+v", st)
	}
	h.waitFor("the second track", func(s Status) bool { return s.Index == 1 })
	h.waitFor("the first again", func(s Status) bool { return s.Index == 0 && s.State == Playing })
	// The second again: the three tracks checked below are whole before
	// the pause fades out what follows.
	h.waitFor("the second again", func(s Status) bool { return s.Index == 1 && s.State == Playing })
	h.do(Command{Action: ActPause})
	heard := sink.heard()
	if len(heard) < 3*4800 {
		t.Fatalf("heard %d frames", len(heard))
	}
	for i := rampFrames; i < 3*4800; i++ {
		level := []float64{1000, 2000}[i/4800%2] / 32768
		if heard[i][0] != level || counter(heard[i]) != i%4800%1000 {
			t.Fatalf("frame %d = %v, want track %d sample %d", i, heard[i], i/4800%2, i%4800)
		}
	}
}

// Final marks the last track of the play order (where the sleep timer's
// "folder" ends), not the folder's last; in single every track is final.
func TestFinalIsTheLastOfThePlayOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := folderOf(t, "f", 6, 6, 6, 6)
		h := newHarness(t, catalog{"f": f}, Config{Rand: rand.NewPCG(2, 3)}, &recSink{perWrite: 2 * time.Millisecond})
		h.do(Command{Action: ActFolder, FolderID: "f", Mode: ModeShuffle})
		h.do(Command{Action: ActPause})
		order := h.latest().Queue.Order
		for k, i := range order {
			st := h.p.Status()
			if last := k == len(order)-1; st.Index != i || st.Final != last || st.CanNext == last {
				t.Fatalf("at %d of the order %v: index %d final %v can next %v", k, order, st.Index, st.Final, st.CanNext)
			}
			if k < len(order)-1 {
				h.do(Command{Action: ActNext})
			}
		}
		// The last of a shuffled cycle goes on only where the folder repeats.
		if st := h.do(Command{Action: ActRepeat, Word: RepeatFolder}); !st.CanNext {
			t.Errorf("repeat folder at the end of the order: can next %v", st.CanNext)
		}
		// A start of single ends with its track, but next still moves on
		// where a track follows in the folder.
		if st := h.do(Command{Action: ActFolder, FolderID: "f", Mode: ModeSingle}); !st.Final || st.CanNext != (st.Index+1 < len(st.Queue)) {
			t.Errorf("single at %d of %d: final %v can next %v", st.Index, len(st.Queue), st.Final, st.CanNext)
		}
	})
}
