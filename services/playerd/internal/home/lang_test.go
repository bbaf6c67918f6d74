package home

import (
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/lang/langtest"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// TestLanguageOfEveryTag: the home model speaks the language lang.Of
// decides for the settings' tag: the "continue" category is named in it
// and the tiles' subtitles are in it, for every kind of tag the settings
// accept. The subtitles were English for de-AT and German only for "de".
func TestLanguageOfEveryTag(t *testing.T) {
	want := map[lang.Lang]struct{ cont, tracks, track, live, episodes string }{
		lang.German:  {"Weiterhören", "2 Titel", "1 Titel", "Live-Radio", "3 Folgen"},
		lang.English: {"Continue", "2 tracks", "1 track", "Live radio", "3 episodes"},
	}
	fs := append(folders(),
		library.Folder{ID: "r", Name: "Radio", Kind: library.KindRadio, Tracks: []library.Track{{ID: "r0"}}},
		library.Folder{ID: "p", Name: "Pod", Kind: library.KindPodcast, Tracks: []library.Track{{ID: "p0"}, {ID: "p1"}, {ID: "p2"}}})
	resume := map[string]state.ResumePoint{"a": {Index: 1, Position: 50, UpdatedAt: time.Now()}}
	for _, tag := range langtest.Tags {
		l := lang.Of(tag).UI
		w, ok := want[l]
		if !ok {
			t.Fatalf("%s: decided %q, which the home model has no words in", tag, l)
		}
		h := Build(WithStreams(Defaults([]string{"Hörspiele", "Musik"})), fs, resume, l)
		subs := map[string]string{}
		for _, c := range h.Categories {
			for _, r := range c.Rows {
				for _, it := range r.Items {
					subs[it.ID] = it.Subtitle
				}
			}
		}
		if got := l.Pick(h.Categories[0].Labels); got != w.cont {
			t.Errorf("%s: first category %q, want %q", tag, got, w.cont)
		}
		if subs["a"] != w.tracks || subs["b"] != w.track || subs["r"] != w.live || subs["p"] != w.episodes {
			t.Errorf("%s: subtitles %q, %q, %q, %q; want %q, %q, %q, %q", tag, subs["a"], subs["b"], subs["r"], subs["p"],
				w.tracks, w.track, w.live, w.episodes)
		}
	}
}
