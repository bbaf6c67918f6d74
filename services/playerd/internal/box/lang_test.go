package box

import (
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/lang/langtest"
)

// TestLanguageOfEveryTag: what the core says and shows of its own follows
// lang.Of for every kind of tag the settings accept: the voice of its
// announcements, the words it chooses (german), /api/info's ui_language
// and the home model's subtitles. With en-GB the voice was English and
// the screen German; with fr the voice was French and the words English.
func TestLanguageOfEveryTag(t *testing.T) {
	b := newTestBox(t, nil)
	for _, tag := range langtest.Tags {
		s := b.settings.Get()
		s.Language = tag
		if err := b.settings.Put(s); err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		d := lang.Of(tag)
		if got := b.voice().Language; got != d.Voice {
			t.Errorf("%s: voice %q, want %q", tag, got, d.Voice)
		}
		if b.german() != (d.UI == lang.German) {
			t.Errorf("%s: german() %v, want language %s", tag, b.german(), d.UI)
		}
		if got := b.Info()["ui_language"]; got != d.UI {
			t.Errorf("%s: ui_language %v, want %s", tag, got, d.UI)
		}
		sub := b.Home().Categories[0].Rows[0].Items[0].Subtitle
		if want := map[lang.Lang]string{lang.German: "1 Titel", lang.English: "1 track"}[d.UI]; sub != want {
			t.Errorf("%s: home subtitle %q, want %q", tag, sub, want)
		}
	}
	// A voice language of its own stays the parent's choice.
	s := b.settings.Get()
	s.Language, s.Speech.Language = "en-GB", "fr-FR"
	if err := b.settings.Put(s); err != nil {
		t.Fatal(err)
	}
	if got := b.voice().Language; got != "fr-FR" {
		t.Errorf("voice %q, want the settings' own fr-FR", got)
	}
}
