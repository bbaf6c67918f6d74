package lang_test

import (
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/lang/langtest"
	"github.com/storybox/storybox/services/playerd/internal/settings"
)

func TestOf(t *testing.T) {
	want := map[string]lang.Decision{
		"de": {UI: lang.German, Voice: "de"}, "en": {UI: lang.English, Voice: "en"},
		"de-DE": {UI: lang.German, Voice: "de-DE"}, "de-AT": {UI: lang.German, Voice: "de-AT"}, "de-CH": {UI: lang.German, Voice: "de-CH"},
		"en-GB": {UI: lang.English, Voice: "en-GB"}, "en-US": {UI: lang.English, Voice: "en-US"},
		"en_GB": {UI: lang.English, Voice: "en-GB"}, "EN-gb": {UI: lang.English, Voice: "en-GB"}, "de_at": {UI: lang.German, Voice: "de-AT"},
		"deu": {UI: lang.German, Voice: "de"}, "eng": {UI: lang.English, Voice: "en"},
		"gsw":        {UI: lang.German, Voice: "de"}, // Swiss German reads German; a German voice reads it
		"de-Latn-DE": {UI: lang.German, Voice: "de-DE"}, "en-GB-oxendict": {UI: lang.English, Voice: "en-GB"},
		"fr": {UI: lang.Fallback, Voice: "en"}, "pt_BR": {UI: lang.Fallback, Voice: "en"}, "nl-BE": {UI: lang.Fallback, Voice: "en"}, "zh-Hant": {UI: lang.Fallback, Voice: "en"},
		"xx": {UI: lang.Fallback, Voice: "en"}, "qq-ZZ": {UI: lang.Fallback, Voice: "en"},
	}
	for _, tag := range langtest.Tags {
		w, ok := want[tag]
		if !ok {
			t.Errorf("%s: no expectation", tag)
			continue
		}
		if got := lang.Of(tag); got != w {
			t.Errorf("Of(%q) = %+v, want %+v", tag, got, w)
		}
	}
	if got := lang.Of(""); got.UI != lang.Default {
		t.Errorf("Of(\"\") = %+v, want the default", got)
	}
}

// TestTagsAreAccepted: the tags every part is tried with are ones the
// settings take.
func TestTagsAreAccepted(t *testing.T) {
	for _, tag := range langtest.Tags {
		s := settings.Defaults()
		s.Language = tag
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", tag, err)
		}
	}
}

func TestPick(t *testing.T) {
	both := map[string]string{"de": "Weiterhören", "en": "Continue", "fr": "Continuer"}
	for _, tc := range []struct {
		l     lang.Lang
		texts map[string]string
		want  string
	}{
		{lang.German, both, "Weiterhören"},
		{lang.English, both, "Continue"},
		{lang.English, map[string]string{"de": "Musik"}, "Musik"},
		{lang.German, map[string]string{"en": "Music", "fr": "Musique"}, "Music"},
		{lang.German, map[string]string{"nl": "Muziek", "fr": "Musique"}, "Musique"},
		{lang.German, map[string]string{"de": ""}, ""},
		{lang.German, nil, ""},
	} {
		if got := tc.l.Pick(tc.texts); got != tc.want {
			t.Errorf("%s.Pick(%v) = %q, want %q", tc.l, tc.texts, got, tc.want)
		}
	}
}
