package display

import (
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Calm mode: the now-playing screen says which folder waits for the
// track's end, in place of "track 1 of 2".
func TestPlayingShowsTheWaitingFolder(t *testing.T) {
	fp := newFakePlayer(playingStatus())
	d, _ := newTestDisplay(t, fp, nil)
	before := snap(t, d)
	fp.set(func(s *player.Status) { s.Waiting = &player.Waiting{FolderID: "b", Folder: "Folge B"} })
	if p := playingFrom(fp.Status()); p.Waiting != "Folge B" {
		t.Fatalf("view %+v", p)
	}
	after := snap(t, d)
	l := layoutPlaying(content(before.Bounds().Size(), false))
	if diffPixels(before, after, l.sub) == 0 {
		t.Error("the waiting folder is not shown under the title")
	}
	if n := diffPixels(before, after, before.Bounds()) - diffPixels(before, after, l.sub); n != 0 {
		t.Errorf("%d pixels changed outside the line under the title", n)
	}
}
