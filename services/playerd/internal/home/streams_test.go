package home

import (
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

func withStreams() []library.Folder {
	fs := folders()
	fs = append(fs,
		library.Folder{ID: "s1", Kind: library.KindRadio, Name: "Kinderfunk", Tracks: []library.Track{{ID: "s1", Provider: library.ProviderRadio}}},
		library.Folder{ID: "p1", Kind: library.KindPodcast, Name: "Gute Nacht", Tracks: []library.Track{
			{ID: "e3", Title: "Neu", Duration: 100}, {ID: "e2", Title: "Zwei", Duration: 200}, {ID: "e1", Title: "Eins", Duration: 300},
		}},
	)
	return fs
}

// Stations and podcasts have rows of their own, whose tiles play them with
// the ordinary folder command; library rows show media folders only.
func TestStationAndPodcastRows(t *testing.T) {
	h := Build(WithStreams(Defaults(nil)), withStreams(), nil, "de")
	var radio, pods, lib []Item
	for _, c := range h.Categories {
		for _, r := range c.Rows {
			switch c.ID {
			case "radio-stations":
				radio = r.Items
			case "podcast-feeds":
				pods = r.Items
			case "music":
				lib = r.Items
			}
		}
	}
	if len(radio) != 1 || radio[0].Kind != "radio" || radio[0].Subtitle != "Live-Radio" || radio[0].ResumePolicy != "none" ||
		radio[0].Command != (player.Command{Action: player.ActFolder, FolderID: "s1"}) {
		t.Errorf("radio row %+v", radio)
	}
	if len(pods) != 1 || pods[0].Kind != "podcast" || pods[0].Subtitle != "3 Folgen" {
		t.Errorf("podcast row %+v", pods)
	}
	for _, it := range lib {
		if it.ID == "s1" || it.ID == "p1" {
			t.Errorf("a library row shows %q", it.ID)
		}
	}
	// Without stations or podcasts the categories are left out.
	h = Build(WithStreams(Defaults(nil)), folders(), nil, "en")
	for _, c := range h.Categories {
		if c.ID == "radio-stations" || c.ID == "podcast-feeds" {
			t.Errorf("empty category %q shown", c.ID)
		}
	}
	if err := WithStreams(Defaults(nil)).Validate(); err != nil {
		t.Error(err)
	}
}

// A podcast left in an episode that new ones moved down resumes that
// episode; its progress is the episode's own.
func TestPodcastInContinueRow(t *testing.T) {
	resume := map[string]state.ResumePoint{"p1": {Index: 0, TrackID: "e2", Position: 50, UpdatedAt: time.Now()}}
	h := Build(Defaults(nil), withStreams(), resume, "de")
	items := h.Categories[0].Rows[0].Items
	if len(items) != 1 || *items[0].Command.ItemIndex != 1 || items[0].Subtitle != "Zwei · 25%" || items[0].Provider != "podcast" {
		t.Errorf("continue row %+v", items)
	}
}
