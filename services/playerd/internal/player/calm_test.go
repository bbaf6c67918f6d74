package player

import (
	"context"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

func via(v auth.Via) context.Context {
	return auth.WithCaller(context.Background(), auth.Caller{Via: v})
}

// In calm mode a child's card waits for the track to end, is shown in the
// status meanwhile, and starts on the sample after the track's last one;
// the rest of the folder that played is never heard.
func TestCalmCardWaitsForTheTrackEnd(t *testing.T) {
	sink := &recSink{perWrite: 2 * time.Millisecond}
	a, b := folderOf(t, "a", 1.05, 1), folderOf(t, "b", 0.3)
	h := newHarness(t, catalog{"a": a, "b": b}, Config{Calm: true}, sink)
	h.do(Command{Action: ActFolder, FolderID: "a"})
	st, err := h.p.Do(via(auth.Card), Command{Action: ActFolder, FolderID: "b"})
	if err != nil || *st.FolderID != "a" || st.Waiting == nil || *st.Waiting != (Waiting{FolderID: "b", Folder: "Folder b"}) {
		t.Fatalf("the card did not wait: %+v %v", st, err)
	}
	h.waitFor("folder b", func(s Status) bool { return s.FolderID != nil && *s.FolderID == "b" && s.State == Playing })
	if st := h.p.Status(); st.Waiting != nil {
		t.Errorf("still waiting after the start: %+v", st.Waiting)
	}
	h.waitFor("the end of b", func(s Status) bool { return s.State == Stopped })
	// Folder a was left at the start of its second track, as its first
	// track's end leaves it.
	var last state.Saved
	for len(h.saved) > 0 {
		last = <-h.saved
	}
	if rp, ok := last.Resume["a"]; !ok || rp.Index != 1 || rp.Position != 0 {
		t.Errorf("a's resume point %+v (%v), want track 1 at 0", rp, ok)
	}
	heard := sink.heard()
	const end = 50400 // 1.05 s of a's first track
	if len(heard) != end+14400 {
		t.Fatalf("heard %d frames, want a's first track and b (%d)", len(heard), end+14400)
	}
	for i := rampFrames; i < len(heard); i++ {
		n := i
		if i >= end {
			n = i - end
			if n < rampFrames {
				continue // b fades in
			}
		}
		if heard[i][0] != 1000.0/32768 || counter(heard[i]) != n%1000 {
			t.Fatalf("frame %d = %v, want level %v sample %d (a's first track, then b's)", i, heard[i], 1000.0/32768, n%1000)
		}
	}
}

// What acts at once in calm mode: a command card, the parent's API, a
// folder while nothing plays; stop and an immediate start drop what waits,
// a newer card replaces it, and turning calm off drops it.
func TestCalmOnlyHoldsAChildsStartOverATrack(t *testing.T) {
	sink := &recSink{perWrite: 2 * time.Millisecond}
	a, b, c := folderOf(t, "a", 30), folderOf(t, "b", 30), folderOf(t, "c", 30)
	h := newHarness(t, catalog{"a": a, "b": b, "c": c}, Config{Calm: true}, sink)
	child, button := via(auth.Card), via(auth.Button)
	// Nothing plays: the card starts at once.
	if st, _ := h.p.Do(child, Command{Action: ActFolder, FolderID: "a"}); *st.FolderID != "a" || st.Waiting != nil {
		t.Fatalf("a card over silence: %+v", st)
	}
	if st, _ := h.p.Do(button, Command{Action: ActResume, FolderID: "b", ItemIndex: idx(0)}); *st.FolderID != "a" || st.Waiting == nil || st.Waiting.FolderID != "b" {
		t.Fatalf("a button's resume did not wait: %+v", st)
	}
	if st, _ := h.p.Do(child, Command{Action: ActFolder, FolderID: "c"}); st.Waiting == nil || st.Waiting.FolderID != "c" {
		t.Fatalf("a newer card did not replace the waiting one: %+v", st.Waiting)
	}
	if st, _ := h.p.Do(child, Command{Action: ActVolumeDelta, Value: val(-5)}); st.Volume != 95 || st.Waiting == nil {
		t.Errorf("a command card: %+v", st)
	}
	if st, _ := h.p.Do(child, Command{Action: ActStop}); st.State != Stopped || st.Waiting != nil {
		t.Errorf("stop kept the waiting folder: %+v", st)
	}
	h.do(Command{Action: ActPlay})
	h.p.Do(child, Command{Action: ActFolder, FolderID: "b"})
	if st := h.do(Command{Action: ActFolder, FolderID: "c"}); *st.FolderID != "c" || st.Waiting != nil {
		t.Errorf("the parent's start: %+v", st)
	}
	if _, err := h.p.Do(child, Command{Action: ActFolder, FolderID: "nope"}); err == nil {
		t.Error("an unknown folder waited")
	}
	h.p.Do(child, Command{Action: ActFolder, FolderID: "a"})
	if st, err := h.p.SetCalm(context.Background(), false); err != nil || st.Waiting != nil {
		t.Errorf("calm off kept the waiting folder: %+v %v", st.Waiting, err)
	}
	if st, _ := h.p.Do(child, Command{Action: ActFolder, FolderID: "b"}); *st.FolderID != "b" {
		t.Errorf("calm off: the card waited: %+v", st)
	}
}

// The gate judges a held folder twice: when the card is read (a refusal
// is answered at once and nothing waits) and when the track ends; the
// start is recorded (Commit) only when it happens. Refused by then, the
// folder goes on with its next track as it would have.
func TestCalmStartIsJudgedAgainAtTheTrackEnd(t *testing.T) {
	g := &recGate{}
	a, b := folderOf(t, "a", 0.5, 30), folderOf(t, "b", 30)
	h := newHarness(t, catalog{"a": a, "b": b}, Config{Calm: true, Gate: g}, &recSink{perWrite: 2 * time.Millisecond})
	h.do(Command{Action: ActFolder, FolderID: "a"})
	child := via(auth.Card)
	g.set(func(a Ask) error {
		if a.Cmd.FolderID == "b" {
			return errNo
		}
		return nil
	}, 0)
	if st, err := h.p.Do(child, Command{Action: ActFolder, FolderID: "b"}); err == nil || st.Waiting != nil {
		t.Fatalf("a refused card: %+v %v", st.Waiting, err)
	}
	g.set(nil, 0)
	if st, err := h.p.Do(child, Command{Action: ActFolder, FolderID: "b"}); err != nil || st.Waiting == nil {
		t.Fatalf("card b: %+v %v", st.Waiting, err)
	}
	if _, _, commits := g.last(); len(commits) != 1 {
		t.Errorf("commits %v: the held start was recorded before it happened", commits)
	}
	g.set(func(a Ask) error {
		if a.Cmd.FolderID == "b" {
			return errNo // bedtime began meanwhile
		}
		return nil
	}, 0)
	st := h.waitFor("a's second track", func(s Status) bool { return s.Index == 1 && s.Waiting == nil })
	if *st.FolderID != "a" || st.State != Playing {
		t.Errorf("after a refused start: folder %s state %s, want a playing on", *st.FolderID, st.State)
	}
	if _, _, commits := g.last(); len(commits) != 1 {
		t.Errorf("commits %v: a refused start was recorded", commits)
	}
}
