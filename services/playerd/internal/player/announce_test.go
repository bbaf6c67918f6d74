package player

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

func clipOf(n int, level float64) [][2]float64 {
	c := make([][2]float64, n)
	for i := range c {
		c[i] = [2]float64{level, level}
	}
	return c
}

// The announcement tests run in a synctest bubble: the sink's perWrite is
// then fake time, which passes only while every goroutine waits. A clip
// cannot end between Announce returning and the test reading the status,
// and a command sent during a clip lands before the clip's next period.

// Running music pauses for an announcement and continues with the very
// sample where it stopped.
func TestAnnouncementResumesMusicExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &recSink{perWrite: time.Millisecond}
		f := folderOf(t, "f", 5)
		h := newHarness(t, catalog{"f": f}, Config{AnnounceVolume: 100}, sink)
		h.do(Command{Action: ActFolder, FolderID: "f"})
		h.waitFor("music", func(s Status) bool { return s.Position > 0.2 })
		done, err := h.p.Announce(context.Background(), clipOf(4800, 0.5))
		if err != nil {
			t.Fatal(err)
		}
		if st := h.p.Status(); !st.Speaking || st.State != Paused {
			t.Errorf("during the announcement: speaking %v state %s", st.Speaking, st.State)
		}
		<-done
		h.waitFor("music again", func(s Status) bool { return s.State == Playing && !s.Speaking })
		h.waitFor("more music", func(s Status) bool { return s.Position > 1 })
		heard := sink.heard()
		start, end := -1, -1
		for i, fr := range heard {
			if fr[0] == 0.5 {
				if start < 0 {
					start = i
				}
				end = i + 1
			}
		}
		if start < 0 || end-start != 4800 {
			t.Fatalf("announcement frames %d..%d, want 4800 of them", start, end)
		}
		before := counter(heard[start-rampFrames-1]) // last frame before the fade-out
		after := counter(heard[end+rampFrames])      // first frame after the fade-in
		if after != (before+rampFrames+1)%1000 {
			t.Errorf("music resumed at sample %d, want %d", after, (before+rampFrames+1)%1000)
		}
	})
}

func TestPausedMusicStaysPausedAfterAnnouncement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &recSink{perWrite: time.Millisecond}
		f := folderOf(t, "f", 5)
		h := newHarness(t, catalog{"f": f}, Config{}, sink)
		h.do(Command{Action: ActFolder, FolderID: "f"})
		paused := h.do(Command{Action: ActPause}).Position
		done, err := h.p.Announce(context.Background(), clipOf(2400, 0.25))
		if err != nil {
			t.Fatal(err)
		}
		<-done
		st := h.waitFor("announcement over", func(s Status) bool { return !s.Speaking })
		if st.State != Paused || st.Position != paused {
			t.Errorf("after the announcement: %s at %v, want paused at %v", st.State, st.Position, paused)
		}
	})
}

// Announcements play in order; a pause during one keeps the music paused.
func TestAnnouncementsQueueAndCommandsMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &recSink{perWrite: time.Millisecond}
		f := folderOf(t, "f", 5)
		h := newHarness(t, catalog{"f": f}, Config{AnnounceVolume: 100}, sink)
		h.do(Command{Action: ActFolder, FolderID: "f"})
		first, err := h.p.Announce(context.Background(), clipOf(9600, 0.5))
		if err != nil {
			t.Fatal(err)
		}
		h.do(Command{Action: ActPause})
		go func() { <-first }()
		second, err := h.p.Announce(context.Background(), clipOf(2400, 0.25))
		if err != nil {
			t.Fatal(err)
		}
		<-second
		st := h.waitFor("announcements over", func(s Status) bool { return !s.Speaking })
		if st.State != Paused {
			t.Errorf("music paused during an announcement came back as %s", st.State)
		}
		heard := sink.heard()
		last := 0.0
		for _, fr := range heard {
			if fr[0] == 0.5 || fr[0] == 0.25 {
				if fr[0] == 0.5 && last == 0.25 {
					t.Fatal("second announcement played before the first had finished")
				}
				last = fr[0]
			}
		}
	})
}

// The queue is bounded: with one announcement playing and the rest of the
// queue full, the next one is refused.
func TestTooManyAnnouncements(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// In the bubble the sink's 5 ms per period pass only while every
		// goroutine waits, so all requests below reach the player long
		// before the first clip (47 periods) has played.
		sink := &recSink{perWrite: 5 * time.Millisecond}
		h := newHarness(t, catalog{}, Config{}, sink)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // the ones still waiting give up
		pcm := clipOf(48000, 0.1)
		results := make(chan error, maxAnnouncements+2)
		for range maxAnnouncements + 2 {
			go func() {
				_, err := h.p.Announce(ctx, pcm)
				results <- err
			}()
		}
		var busy error
		for range maxAnnouncements + 2 {
			err := <-results
			if errors.Is(err, fault.Busy) {
				busy = err
				break
			}
			if err != nil {
				t.Errorf("announce: %v", err)
			}
		}
		if busy == nil {
			t.Error("the announcement queue is unbounded")
		}
	})
}
