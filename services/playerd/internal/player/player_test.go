package player

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

func counter(fr [2]float64) int { return int(math.Round(fr[1]*32768/30)) % 1000 }

// The next track starts on the sample after the previous one ends.
func TestGaplessQueue(t *testing.T) {
	sink := &recSink{}
	f := folderOf(t, "f", 0.3, 0.2)
	h := newHarness(t, catalog{"f": f}, Config{}, sink)
	h.do(Command{Action: ActFolder, FolderID: "f"})
	st := h.waitFor("end of queue", func(s Status) bool { return s.State == Stopped })
	if st.Index != 0 || st.Position != 0 {
		t.Errorf("after the end: index %d position %v, want 0 0", st.Index, st.Position)
	}
	heard := sink.heard()
	if len(heard) != 24000 {
		t.Fatalf("heard %d frames, want exactly 24000 (0.3 s + 0.2 s)", len(heard))
	}
	for i := rampFrames; i < len(heard); i++ {
		want, n := 1000.0/32768, i
		if i >= 14400 {
			want, n = 2000.0/32768, i-14400
		}
		if heard[i][0] != want || counter(heard[i]) != n%1000 {
			t.Fatalf("frame %d = %v, want level %v sample %d", i, heard[i], want, n%1000)
		}
	}
	if heard[0] != [2]float64{} {
		t.Errorf("first frame %v: playback must fade in from silence", heard[0])
	}
	if sink.drains == 0 {
		t.Error("the end of the queue must drain the device")
	}
}

func TestEmptyQueueRefusesPlayback(t *testing.T) {
	h := newHarness(t, catalog{}, Config{}, &recSink{})
	for _, a := range []string{ActPlay, ActToggle, ActPause, ActNext, ActPrevious} {
		if msg := h.fails(Command{Action: a}, fault.Conflict); msg != "queue is empty" {
			t.Errorf("%s: %q", a, msg)
		}
	}
	h.fails(Command{Action: ActSeek, Value: val(3)}, fault.Conflict)
	if st := h.do(Command{Action: ActStop}); st.State != Stopped || st.Index != -1 {
		t.Errorf("stop on an empty player: %+v", st)
	}
}

func TestInvalidCommands(t *testing.T) {
	f := folderOf(t, "f", 1, 1)
	h := newHarness(t, catalog{"f": f}, Config{}, &recSink{})
	cases := []struct {
		cmd  Command
		want string
	}{
		{Command{}, "action is required"},
		{Command{Action: "dance"}, `unknown action "dance"`},
		{Command{Action: ActVolume}, "volume needs a numeric value"},
		{Command{Action: ActSeek}, "seek needs a numeric value"},
		{Command{Action: ActPlay, Value: val(1)}, "play takes no value"},
		{Command{Action: ActFolder}, "folder needs folder_id"},
		{Command{Action: ActFolder, FolderID: "nope"}, `unknown or empty folder "nope"`},
		{Command{Action: ActResume, FolderID: "f"}, "resume needs item_index"},
		{Command{Action: ActResume, FolderID: "f", ItemIndex: idx(2)}, "item_index 2 is outside 0..1"},
		{Command{Action: ActResume, FolderID: "f", ItemIndex: idx(-1)}, "item_index -1 is outside 0..1"},
		{Command{Action: ActNext, FolderID: "f"}, "next takes no folder_id"},
		{Command{Action: ActVolume, Value: val(math.NaN())}, "invalid value"},
		{Command{Action: ActVolume, Value: val(math.Inf(1))}, "invalid value"},
	}
	before := h.p.Status()
	for _, c := range cases {
		if msg := h.fails(c.cmd, fault.Invalid); msg != c.want {
			t.Errorf("%+v: %q, want %q", c.cmd, msg, c.want)
		}
	}
	if after := h.p.Status(); after.State != before.State || after.Volume != before.Volume || after.Index != before.Index {
		t.Errorf("refused commands changed the player: %+v -> %+v", before, after)
	}
}

// Rule 1 of the spec: every path that sets volume stays at or below max.
func TestVolumeNeverAboveMaximum(t *testing.T) {
	h := newHarness(t, catalog{}, Config{MaxVolume: 60, StartVolume: 30}, &recSink{})
	steps := []struct {
		cmd  Command
		want int
	}{
		{Command{Action: ActVolume, Value: val(200)}, 60},
		{Command{Action: ActVolume, Value: val(-5)}, 0},
		{Command{Action: ActVolume, Value: val(42.6)}, 43},
		{Command{Action: ActVolumeDelta, Value: val(10)}, 53},
		{Command{Action: ActVolumeDelta, Value: val(10)}, 60},
		{Command{Action: ActVolumeDelta, Value: val(-100)}, 0},
	}
	for _, s := range steps {
		if st := h.do(s.cmd); st.Volume != s.want || st.MaxVolume != 60 {
			t.Errorf("%s %v: volume %d, want %d", s.cmd.Action, *s.cmd.Value, st.Volume, s.want)
		}
	}
}

// Fast taps must not get past the maximum (MuPiBox issue #42).
func TestConcurrentVolumeTapsStayCapped(t *testing.T) {
	h := newHarness(t, catalog{}, Config{MaxVolume: 50, StartVolume: 30}, &recSink{})
	done := make(chan struct{})
	for range 20 {
		go func() {
			h.do(Command{Action: ActVolumeDelta, Value: val(7)})
			done <- struct{}{}
		}()
	}
	for range 20 {
		<-done
	}
	if v := h.p.Status().Volume; v != 50 {
		t.Errorf("volume %d after 20 taps, want the maximum 50", v)
	}
}

func TestStartVolumeCapsRestoredVolume(t *testing.T) {
	for _, c := range []struct{ saved, start, max, want int }{
		{90, 30, 80, 30}, // left loud: starts at the start volume
		{10, 30, 80, 10}, // left quiet: stays quiet
		{0, 30, 80, 30},  // first start
		{50, 70, 40, 40}, // never above the maximum
	} {
		p := New(Config{Catalog: catalog{}, MaxVolume: c.max, StartVolume: c.start, Restored: state.Saved{Volume: c.saved}})
		if got := p.Status().Volume; got != c.want {
			t.Errorf("saved %d start %d max %d: volume %d, want %d", c.saved, c.start, c.max, got, c.want)
		}
	}
}

// In a synctest bubble the 30 ms a paused player must stay still are fake
// time: a player that kept rendering would write 15 periods meanwhile.
func TestPauseToggleStopAndPlay(t *testing.T) { synctest.Test(t, testPauseToggleStopAndPlay) }

func testPauseToggleStopAndPlay(t *testing.T) {
	sink := &recSink{perWrite: 2 * time.Millisecond}
	f := folderOf(t, "f", 5)
	h := newHarness(t, catalog{"f": f}, Config{}, sink)
	h.do(Command{Action: ActFolder, FolderID: "f"})
	h.waitFor("position > 0.2", func(s Status) bool { return s.Position > 0.2 })
	st := h.do(Command{Action: ActPause})
	if st.State != Paused {
		t.Fatalf("pause: state %s", st.State)
	}
	paused := st.Position
	time.Sleep(30 * time.Millisecond)
	if p := h.p.Status().Position; p != paused {
		t.Errorf("position moved while paused: %v -> %v", paused, p)
	}
	if st := h.do(Command{Action: ActToggle}); st.State != Playing {
		t.Errorf("toggle from paused: %s", st.State)
	}
	h.waitFor("position advances again", func(s Status) bool { return s.Position > paused+0.05 })
	if st := h.do(Command{Action: ActToggle}); st.State != Paused {
		t.Errorf("toggle from playing: %s", st.State)
	}
	st = h.do(Command{Action: ActStop})
	if st.State != Stopped || st.Position != 0 || st.Index != 0 {
		t.Errorf("stop: %+v", st)
	}
	if st := h.do(Command{Action: ActPlay}); st.State != Playing || st.Index != 0 {
		t.Errorf("play after stop: %+v", st)
	}
	if sink.drops == 0 {
		t.Error("pause and stop must drop the device buffer")
	}
}

func TestSeekClampsAndNeedsAnActivePlayer(t *testing.T) {
	sink := &recSink{perWrite: 2 * time.Millisecond}
	f := folderOf(t, "f", 4)
	h := newHarness(t, catalog{"f": f}, Config{}, sink)
	h.do(Command{Action: ActFolder, FolderID: "f"})
	paused := h.do(Command{Action: ActPause})
	if st := h.do(Command{Action: ActSeek, Value: val(2.5)}); !near(st.Position, 2.5, 0.001) || st.State != Paused || st.Jumps != paused.Jumps+1 {
		t.Errorf("seek 2.5 while paused: %+v (jumps before %d)", st, paused.Jumps)
	}
	if st := h.do(Command{Action: ActSeek, Value: val(99)}); !near(st.Position, 4, 0.001) {
		t.Errorf("seek past the end: position %v, want the duration 4", st.Position)
	}
	if st := h.do(Command{Action: ActSeek, Value: val(-3)}); st.Position != 0 {
		t.Errorf("seek before the start: position %v, want 0", st.Position)
	}
	h.do(Command{Action: ActStop})
	if msg := h.fails(Command{Action: ActSeek, Value: val(1)}, fault.Conflict); msg != "player is not active" {
		t.Errorf("seek while stopped: %q", msg)
	}
}

// In a synctest bubble the sink's 2 ms per period are fake time: previous
// lands within the first 3 s of the track however slowly the test runs.
func TestNextAndPrevious(t *testing.T) { synctest.Test(t, testNextAndPrevious) }

func testNextAndPrevious(t *testing.T) {
	sink := &recSink{perWrite: 2 * time.Millisecond}
	f := folderOf(t, "f", 6, 6, 6)
	h := newHarness(t, catalog{"f": f}, Config{}, sink)
	h.do(Command{Action: ActFolder, FolderID: "f"})
	if st := h.do(Command{Action: ActNext}); st.Index != 1 || st.State != Playing || st.Position != 0 {
		t.Errorf("next: %+v", st)
	}
	// Within the first 3 s: previous goes to the previous track.
	if st := h.do(Command{Action: ActPrevious}); st.Index != 0 {
		t.Errorf("previous early in a track: index %d, want 0", st.Index)
	}
	h.do(Command{Action: ActNext})
	h.do(Command{Action: ActPause})
	before := h.do(Command{Action: ActSeek, Value: val(4)}).Jumps
	// Later: previous restarts the current track, a jump the event feed
	// must tell even though index and state stay.
	if st := h.do(Command{Action: ActPrevious}); st.Index != 1 || st.Position != 0 || st.State != Paused || st.Jumps == before {
		t.Errorf("previous late in a track: %+v (jumps before %d)", st, before)
	}
	h.do(Command{Action: ActNext})
	// At the end of the queue, next stops.
	if st := h.do(Command{Action: ActNext}); st.State != Stopped {
		t.Errorf("next at the end: state %s, want stopped", st.State)
	}
}

// In a synctest bubble the sink's 2 ms per period are fake time: the music
// plays on between the seek and leaving the folder only while the test
// waits for the player, not while the test itself is held up.
func TestResumeContinuesWhereTheFolderWasLeft(t *testing.T) {
	synctest.Test(t, testResumeContinuesWhereTheFolderWasLeft)
}

func testResumeContinuesWhereTheFolderWasLeft(t *testing.T) {
	sink := &recSink{perWrite: 2 * time.Millisecond}
	f := folderOf(t, "f", 10, 10)
	g := folderOf(t, "g", 3)
	h := newHarness(t, catalog{"f": f, "g": g}, Config{}, sink)
	h.do(Command{Action: ActResume, FolderID: "f", ItemIndex: idx(1)})
	h.do(Command{Action: ActSeek, Value: val(7.5)})
	h.do(Command{Action: ActFolder, FolderID: "g"}) // leaving f records where it was
	st := h.do(Command{Action: ActResume, FolderID: "f", ItemIndex: idx(1)})
	if st.Index != 1 || st.Position < 7.5 || st.Position > 8 {
		t.Errorf("resume: index %d position %v, want 1 at 7.5 s", st.Index, st.Position)
	}
	// Another track of the folder starts at its beginning.
	if st := h.do(Command{Action: ActResume, FolderID: "f", ItemIndex: idx(0)}); st.Position != 0 {
		t.Errorf("resume at another track: position %v, want 0", st.Position)
	}
	// folder always starts from the beginning.
	if st := h.do(Command{Action: ActFolder, FolderID: "f"}); st.Index != 0 || st.Position != 0 {
		t.Errorf("folder: %+v", st)
	}
}

// A restart restores the queue paused where it was, and the resume points.
func TestStateSurvivesRestart(t *testing.T) {
	sink := &recSink{perWrite: 2 * time.Millisecond}
	f := folderOf(t, "f", 10, 10)
	cat := catalog{"f": f}
	h := newHarness(t, cat, Config{}, sink)
	h.do(Command{Action: ActResume, FolderID: "f", ItemIndex: idx(1)})
	h.do(Command{Action: ActSeek, Value: val(6)})
	h.do(Command{Action: ActVolume, Value: val(25)})
	h.stop()
	var last state.Saved
	for len(h.saved) > 0 {
		last = <-h.saved
	}
	if last.Queue == nil || last.Queue.FolderID != "f" || last.Queue.Index != 1 || last.Queue.Position < 6 {
		t.Fatalf("saved queue %+v", last.Queue)
	}
	if rp := last.Resume["f"]; rp.Index != 1 || rp.Position < 6 || rp.TrackID != "fb" {
		t.Errorf("saved resume point %+v", rp)
	}
	p := New(Config{Catalog: cat, MaxVolume: 100, StartVolume: 100, Restored: last})
	st := p.Status()
	if st.State != Paused || st.Index != 1 || st.Position < 6 || st.Volume != 25 || *st.FolderID != "f" {
		t.Errorf("after restart: %+v", st)
	}
}

func TestUndecodableTracksAreSkipped(t *testing.T) {
	var skipped atomic.Int32
	sink := &recSink{}
	f := folderOf(t, "f", -1, 0.1, -1, 0.1)
	h := newHarness(t, catalog{"f": f}, Config{OnSkip: func(library.Track, error) { skipped.Add(1) }}, sink)
	st := h.do(Command{Action: ActFolder, FolderID: "f"})
	if st.Index != 1 || st.State != Playing {
		t.Errorf("folder with a broken first track: %+v", st)
	}
	h.waitFor("end", func(s Status) bool { return s.State == Stopped })
	if n := len(sink.heard()); n != 9600 {
		t.Errorf("heard %d frames, want the two good tracks (9600)", n)
	}
	if skipped.Load() < 2 {
		t.Errorf("%d skips reported, want at least 2", skipped.Load())
	}
}

func TestNothingPlayableIsAnError(t *testing.T) {
	f := folderOf(t, "f", -1, -1)
	h := newHarness(t, catalog{"f": f}, Config{}, &recSink{})
	msg := h.fails(Command{Action: ActFolder, FolderID: "f"}, fault.Conflict)
	st := h.p.Status()
	if st.State != Failed || st.Error == "" || !strings.Contains(msg, "no track") {
		t.Errorf("state %s error %q (%q)", st.State, st.Error, msg)
	}
}

// A device that goes away puts the player in error; it recovers by itself.
func TestDeviceLostAndRecovered(t *testing.T) {
	sink := &recSink{perWrite: time.Millisecond}
	var opens atomic.Int32
	var unplugged atomic.Bool
	open := func(int) (output.Sink, error) {
		opens.Add(1)
		if unplugged.Load() {
			return nil, errors.New("no such device")
		}
		return sink, nil
	}
	f := folderOf(t, "f", 30)
	h := newHarness(t, catalog{"f": f}, Config{Open: open}, sink)
	h.do(Command{Action: ActFolder, FolderID: "f"})
	h.waitFor("playing", func(s Status) bool { return s.Position > 0.1 })
	unplugged.Store(true)
	sink.mu.Lock()
	sink.fail = output.ErrDeviceLost
	sink.mu.Unlock()
	st := h.waitFor("error state", func(s Status) bool { return s.State == Failed })
	if !strings.Contains(st.Error, "audio device lost") {
		t.Errorf("error %q should say what happened", st.Error)
	}
	sink.mu.Lock()
	sink.fail = nil
	sink.mu.Unlock()
	unplugged.Store(false)
	st = h.waitFor("recovered", func(s Status) bool { return s.State == Playing && s.Error == "" })
	h.waitFor("advancing", func(s Status) bool { return s.Position > st.Position+0.1 })
	if opens.Load() < 2 {
		t.Errorf("opened %d times, want a reopen", opens.Load())
	}
}

func TestRunReturnsAndLaterCommandsFail(t *testing.T) {
	h := newHarness(t, catalog{}, Config{}, &recSink{})
	h.stop()
	if _, err := h.p.Do(context.Background(), Command{Action: ActStop}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Run returned: %v", err)
	}
	if !h.sink.closed {
		t.Error("sink not closed at shutdown")
	}
}

// latestSave returns the newest state handed to Save and its urgency.
func (h *harness) latestSave() (state.Saved, state.Urgency) {
	h.t.Helper()
	var last state.Saved
	n := 0
	for len(h.saved) > 0 {
		last = <-h.saved
		n++
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n == 0 || len(h.urgency) == 0 {
		h.t.Fatal("nothing was saved")
	}
	return last, h.urgency[len(h.urgency)-1]
}

// A change a person makes reaches the saver, marked urgent, before the
// command is answered, so the 1 s to disk starts at the acknowledgement.
func TestCommandsSaveUrgentlyBeforeTheAnswer(t *testing.T) {
	f := folderOf(t, "f", 2, 30)
	h := newHarness(t, catalog{"f": f}, Config{}, &recSink{perWrite: 20 * time.Millisecond})
	steps := []struct {
		cmd   Command
		check func(state.Saved) bool
	}{
		{Command{Action: ActResume, FolderID: "f", ItemIndex: idx(1)}, func(s state.Saved) bool {
			return s.Queue != nil && s.Queue.FolderID == "f" && s.Queue.Index == 1
		}},
		{Command{Action: ActSeek, Value: val(12)}, func(s state.Saved) bool {
			return s.Queue.Position >= 12 && s.Resume["f"].Position >= 12
		}},
		{Command{Action: ActVolume, Value: val(33)}, func(s state.Saved) bool { return s.Volume == 33 }},
		{Command{Action: ActPause}, func(s state.Saved) bool { return s.Resume["f"].Index == 1 && s.Resume["f"].Position >= 12 }},
		{Command{Action: ActPrevious}, func(s state.Saved) bool { return s.Queue.Index == 1 && s.Queue.Position == 0 }},
		{Command{Action: ActPrevious}, func(s state.Saved) bool { return s.Queue.Index == 0 }},
		{Command{Action: ActNext}, func(s state.Saved) bool { return s.Queue.Index == 1 }},
		{Command{Action: ActStop}, func(s state.Saved) bool { return s.Queue.Index == 1 && s.Queue.Position == 0 }},
	}
	for _, step := range steps {
		h.do(step.cmd)
		s, u := h.latestSave()
		if u != state.Urgent || !step.check(s) {
			t.Errorf("%s: saved %+v (queue %+v) with urgency %d, want the change, urgent", step.cmd.Action, s, s.Queue, u)
		}
	}
}

// While playing, the position reaches the saver once per whole second as a
// routine change, not once per period (the saver decides when to write).
func TestPlayingSavesThePositionOncePerSecond(t *testing.T) {
	f := folderOf(t, "f", 6, 4)
	h := newHarness(t, catalog{"f": f}, Config{}, &recSink{})
	h.do(Command{Action: ActFolder, FolderID: "f"})
	h.waitFor("end of queue", func(s Status) bool { return s.State == Stopped })
	h.stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	routine := 0
	for _, u := range h.urgency[1:] { // the first is the folder command
		if u == state.Routine {
			routine++
		}
	}
	// 10 s of audio in two tracks: 5+3 whole seconds, the second track and
	// the end of the queue. A save per period would be ~470.
	if routine < 8 || routine > 14 {
		t.Errorf("%d routine saves for 10 s of audio, want about one a second", routine)
	}
}
