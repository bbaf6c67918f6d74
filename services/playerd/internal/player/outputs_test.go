package player

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

func phonesOn(s *recSink, cap int) *Headphones {
	return &Headphones{Device: "usb", Open: func(int) (output.Sink, error) { return s, nil }, MaxVolume: cap}
}

// waitHeard waits until s has taken more than n frames.
func waitHeard(t *testing.T, p *Player, s *recSink, n int) [][2]float64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if h := s.heard(); len(h) > n {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sink took no more than %d frames", n)
		}
		select {
		case <-p.Changed():
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func level(fr [2]float64) float64 { return fr[0] * 32768 }

// Plugging the headphones in moves what plays there, at their cap;
// unplugging pauses and leaves the volume where the headphones had it;
// plugging them in again plays there once more.
func TestHeadphonesPlugUnplugReplug(t *testing.T) {
	speaker, phones := &recSink{perWrite: 2 * time.Millisecond}, &recSink{perWrite: 2 * time.Millisecond}
	f := folderOf(t, "f", 20)
	h := newHarness(t, catalog{"f": f}, Config{MaxVolume: 90}, speaker)
	if st := h.p.Status(); st.Output != OutputSpeaker {
		t.Fatalf("output at start %q, want speaker", st.Output)
	}
	h.do(Command{Action: ActVolume, Value: val(80)})
	h.do(Command{Action: ActFolder, FolderID: "f"})
	waitHeard(t, h.p, speaker, 4*output.PeriodFrames)

	st, err := h.p.SetHeadphones(context.Background(), phonesOn(phones, 50))
	if err != nil {
		t.Fatal(err)
	}
	if st.Output != OutputHeadphones || st.MaxVolume != 50 || st.Volume != 50 || st.State != Playing {
		t.Fatalf("after plugging in: output %q max %d volume %d state %s; want headphones 50 50 playing", st.Output, st.MaxVolume, st.Volume, st.State)
	}
	onSpeaker := len(speaker.heard())
	heard := waitHeard(t, h.p, phones, 8*output.PeriodFrames)
	if !speaker.closed {
		t.Error("the speaker's sink was left open")
	}
	if sp := speaker.heard(); len(sp) < rampFrames || level(sp[len(sp)-1]) > 1 || level(sp[len(sp)-rampFrames]) < 100 {
		t.Errorf("the speaker did not fade out before the switch: it ends %v … %v", sp[len(sp)-rampFrames], sp[len(sp)-1])
	}
	if n := len(speaker.heard()); n != onSpeaker {
		t.Errorf("the speaker took %d frames after the switch", n-onSpeaker)
	}
	if heard[0] != [2]float64{} {
		t.Errorf("the headphones start at %v, want a fade-in from silence", heard[0])
	}
	want := 1000 * gainFor(50)
	if got := level(heard[len(heard)-1]); !near(got, want, 0.01) {
		t.Errorf("level on the headphones %.2f, want %.2f (volume 50)", got, want)
	}
	for i, fr := range heard {
		if level(fr) > want+0.01 {
			t.Fatalf("frame %d on the headphones at %.2f, above their cap's %.2f", i, level(fr), want)
		}
	}
	// The track goes on where the speaker left it, not from its start.
	if st := h.p.Status(); st.Position < float64(onSpeaker-output.PeriodFrames*20)/48000 {
		t.Errorf("position %.2f s after the switch; the speaker had played %.2f s", st.Position, float64(onSpeaker)/48000)
	}
	if _, err := h.p.Do(context.Background(), Command{Action: ActVolume, Value: val(100)}); err != nil {
		t.Fatal(err)
	}
	if st := h.p.Status(); st.Volume != 50 {
		t.Errorf("volume %d on the headphones, want their cap 50", st.Volume)
	}

	// A lower cap for the same headphones: no reopen, the volume follows.
	st, err = h.p.SetHeadphones(context.Background(), phonesOn(phones, 40))
	if err != nil {
		t.Fatal(err)
	}
	if st.Volume != 40 || st.MaxVolume != 40 || phones.closed {
		t.Errorf("after a lower cap: volume %d max %d closed %v; want 40 40 false", st.Volume, st.MaxVolume, phones.closed)
	}

	st, err = h.p.SetHeadphones(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Output != OutputSpeaker || st.State != Paused || st.Volume != 40 || st.MaxVolume != 90 {
		t.Fatalf("after unplugging: output %q state %s volume %d max %d; want speaker paused 40 90", st.Output, st.State, st.Volume, st.MaxVolume)
	}
	if !phones.closed {
		t.Error("the headphones' sink was left open")
	}

	// Play on the speaker: at the volume the headphones had.
	speaker.mu.Lock()
	speaker.frames, speaker.closed = nil, false
	speaker.mu.Unlock()
	h.do(Command{Action: ActPlay})
	heard = waitHeard(t, h.p, speaker, 4*output.PeriodFrames)
	if got, want := level(heard[len(heard)-1]), 1000*gainFor(40); !near(got, want, 0.01) {
		t.Errorf("level on the speaker after unplugging %.2f, want %.2f (volume 40)", got, want)
	}

	phones2 := &recSink{perWrite: 2 * time.Millisecond}
	st, err = h.p.SetHeadphones(context.Background(), &Headphones{Device: "usb2", Open: func(int) (output.Sink, error) { return phones2, nil }, MaxVolume: 30})
	if err != nil {
		t.Fatal(err)
	}
	if st.Output != OutputHeadphones || st.Volume != 30 || st.State != Playing {
		t.Fatalf("after plugging in again: output %q volume %d state %s", st.Output, st.Volume, st.State)
	}
	heard = waitHeard(t, h.p, phones2, 4*output.PeriodFrames)
	if got, want := level(heard[len(heard)-1]), 1000*gainFor(30); !near(got, want, 0.01) {
		t.Errorf("level on the headphones plugged in again %.2f, want %.2f", got, want)
	}
}

// Unplugged while paused, the box stays paused; an announcement waiting
// for the headphones is dropped rather than played on the speaker.
func TestUnplugDropsAnnouncementsAndStaysQuiet(t *testing.T) {
	speaker, phones := &recSink{}, &recSink{perWrite: 5 * time.Millisecond}
	h := newHarness(t, catalog{"f": folderOf(t, "f", 5)}, Config{AnnounceVolume: 50}, speaker)
	if _, err := h.p.SetHeadphones(context.Background(), phonesOn(phones, 60)); err != nil {
		t.Fatal(err)
	}
	h.do(Command{Action: ActFolder, FolderID: "f"})
	h.do(Command{Action: ActPause})
	pcm := make([][2]float64, 48000*5)
	done, err := h.p.Announce(context.Background(), pcm)
	if err != nil {
		t.Fatal(err)
	}
	st, err := h.p.SetHeadphones(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != Paused || st.Speaking || st.Output != OutputSpeaker {
		t.Errorf("after unplugging: state %s speaking %v output %q", st.State, st.Speaking, st.Output)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the announcement is still playing after unplugging")
	}
	if n := len(speaker.heard()); n != 0 {
		t.Errorf("the speaker took %d frames", n)
	}
}

func TestHeadphonesRefuseABadCap(t *testing.T) {
	h := newHarness(t, catalog{}, Config{}, &recSink{})
	for _, c := range []int{0, 101} {
		_, err := h.p.SetHeadphones(context.Background(), phonesOn(&recSink{}, c))
		if !errors.Is(err, fault.Invalid) {
			t.Errorf("cap %d: err %v, want invalid", c, err)
		}
	}
	if st := h.p.Status(); st.Output != OutputSpeaker {
		t.Errorf("output %q after refusals", st.Output)
	}
}
