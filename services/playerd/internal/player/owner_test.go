package player

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Lowering the maximum lowers a louder volume at once: the audio written
// after SetVolumes returns is at the new level within one period's ramp.
func TestSetVolumesLowersALouderVolumeAtOnce(t *testing.T) {
	sink := &recSink{perWrite: time.Millisecond}
	f := folderOf(t, "f", 10)
	h := newHarness(t, catalog{"f": f}, Config{MaxVolume: 100, StartVolume: 100, AnnounceVolume: 80}, sink)
	h.do(Command{Action: ActFolder, FolderID: "f"})
	h.do(Command{Action: ActVolume, Value: val(90)})
	h.waitFor("some audio", func(Status) bool { return len(sink.heard()) > output.PeriodFrames })

	st, err := h.p.SetVolumes(context.Background(), Volumes{Max: 40, Start: 20, Announce: 30})
	if err != nil || st.Volume != 40 || st.MaxVolume != 40 {
		t.Fatalf("after SetVolumes: %+v %v", st, err)
	}
	from := len(sink.heard()) + output.PeriodFrames // past the ramp
	h.waitFor("audio after the change", func(Status) bool { return len(sink.heard()) > from+output.PeriodFrames })
	want := 1000.0 / 32768 * gainFor(40)
	for i, fr := range sink.heard()[from : from+output.PeriodFrames] {
		if !near(fr[0], want, want*0.01) {
			t.Fatalf("frame %d after the change: level %v, want %v", i, fr[0], want)
		}
	}
	// Commands are capped by the new maximum; a quieter volume stays.
	if st := h.do(Command{Action: ActVolume, Value: val(100)}); st.Volume != 40 {
		t.Errorf("volume command after the change: %d", st.Volume)
	}
	h.do(Command{Action: ActVolume, Value: val(10)})
	if st, _ := h.p.SetVolumes(context.Background(), Volumes{Max: 60, Start: 20, Announce: 30}); st.Volume != 10 || st.MaxVolume != 60 {
		t.Errorf("raising the maximum: %+v", st)
	}
	if _, err := h.p.SetVolumes(context.Background(), Volumes{Max: 0, Start: 20, Announce: 30}); !errors.Is(err, fault.Invalid) {
		t.Errorf("max 0: %v", err)
	}
}

func TestMoveFoldersCarriesResumePoints(t *testing.T) {
	sink := &recSink{perWrite: time.Millisecond}
	f, g, k := folderOf(t, "f", 10, 10), folderOf(t, "g", 10), folderOf(t, "k", 10)
	h := newHarness(t, catalog{"f": f, "g": g, "k": k}, Config{}, sink)
	h.do(Command{Action: ActResume, FolderID: "g", ItemIndex: idx(0)})
	h.do(Command{Action: ActSeek, Value: val(6)})
	h.do(Command{Action: ActResume, FolderID: "f", ItemIndex: idx(1)})
	h.do(Command{Action: ActSeek, Value: val(7)})
	h.do(Command{Action: ActFolder, FolderID: "k"})
	h.do(Command{Action: ActSeek, Value: val(8)})

	// f renamed to f2 (its tracks renamed with it), g deleted, k (playing)
	// renamed: k is unloaded and its point follows it.
	moves := map[string]library.Move{
		"f": {NewID: "f2", Tracks: map[string]string{"fa": "f2a", "fb": "f2b"}},
		"g": {},
		"k": {NewID: "k2", Tracks: map[string]string{"ka": "k2a"}},
	}
	if err := h.p.MoveFolders(context.Background(), moves); err != nil {
		t.Fatal(err)
	}
	st := h.p.Status()
	if st.State != Stopped || len(st.Queue) != 0 || st.FolderID != nil || st.Index != -1 {
		t.Errorf("the renamed folder that played is still loaded: %+v", st)
	}
	var last state.Saved
	for len(h.saved) > 0 {
		last = <-h.saved
	}
	r := last.Resume
	if len(r) != 2 || r["f2"].TrackID != "f2b" || r["f2"].Index != 1 || r["f2"].Position < 7 ||
		r["k2"].TrackID != "k2a" || r["k2"].Position < 8 {
		t.Errorf("resume points after the moves: %+v", r)
	}
	if last.Queue != nil {
		t.Errorf("saved queue of an unloaded folder: %+v", last.Queue)
	}
}

func TestReplaceResume(t *testing.T) {
	h := newHarness(t, catalog{}, Config{}, &recSink{})
	at := time.Date(2025, 3, 1, 12, 0, 0, 123, time.UTC)
	want := map[string]state.ResumePoint{"x": {Index: 2, TrackID: "t", Position: 12.5, UpdatedAt: at}}
	if err := h.p.ReplaceResume(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	var last state.Saved
	for len(h.saved) > 0 {
		last = <-h.saved
	}
	if len(last.Resume) != 1 || !reflect.DeepEqual(last.Resume["x"], want["x"]) {
		t.Errorf("saved %+v", last.Resume)
	}
}
