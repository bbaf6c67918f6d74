package display

import (
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/player"
)

// A station shows its title under its name, not "track 1 of 1", and no
// progress bar: it has no duration.
func TestPlayingStationShowsNowPlaying(t *testing.T) {
	name, title := "Kinderfunk", "Rolf Zuckowski - Winterkinder"
	st := player.Status{State: player.Buffering, Folder: &name, Index: 0, Live: true, NowPlaying: &title,
		Queue: []player.QueueItem{{ID: "s", Title: name, Provider: "radio", ResumePolicy: "none"}}, Position: 65}
	p := playingFrom(st)
	if p.NowPlaying != title || p.Count != 0 || p.Dur != 0 || p.Title != name {
		t.Errorf("view %+v", p)
	}
	d, _ := newTestDisplay(t, newFakePlayer(st), nil)
	if _, err := d.Screenshot(t.Context()); err != nil {
		t.Fatal(err)
	}
}
