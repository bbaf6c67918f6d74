package speech

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalizeText(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{"  Abendessen\tist\n\nfertig!  ", "Abendessen ist fertig!", nil},
		{"a\x00b\x07c", "a b c", nil},
		{"bad \xff utf8", "bad utf8", nil},
		{"", "", ErrEmpty},
		{" \n\t ", "", ErrEmpty},
		{strings.Repeat("ä", MaxTextRunes), strings.Repeat("ä", MaxTextRunes), nil},
		{strings.Repeat("ä", MaxTextRunes+1), "", ErrTooLong},
	} {
		got, err := NormalizeText(tc.in)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("NormalizeText(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestSettingsNormalized(t *testing.T) {
	s, err := Settings{}.Normalized()
	if err != nil || s != (Settings{Language: DefaultLanguage, Engine: "auto", Rate: 100, Pitch: 100}) {
		t.Fatalf("defaults: %+v, %v", s, err)
	}
	for _, bad := range []Settings{
		{Language: "-de"}, {Language: "de DE"}, {Language: "d"}, {Language: "de-DE-x-y-z"},
		{Language: "de", Engine: "festival"}, {Language: "de", Rate: 20}, {Language: "de", Pitch: 201},
	} {
		if _, err := bad.Normalized(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := (Settings{Language: "x1"}).Normalized(); !errors.Is(err, ErrLanguage) {
		t.Errorf("malformed tag: %v, want ErrLanguage", err)
	}
}

func TestKeyDependsOnEverything(t *testing.T) {
	base := Request{Text: "Hallo", Settings: Settings{Language: "de-DE", Engine: "auto", Rate: 100, Pitch: 100}}
	k := Key("v1", base)
	if k != Key("v1", base) {
		t.Fatal("key is not deterministic")
	}
	if Key("v1", Request{Text: "Hallo", Settings: Settings{Language: "DE_de", Engine: "auto", Rate: 100, Pitch: 100}}) != k {
		t.Error("language tag spelling changes the key")
	}
	variants := []struct {
		voice string
		r     Request
	}{
		{"v2", base},
		{"v1", Request{Text: "Hallo!", Settings: base.Settings}},
		{"v1", Request{Text: "Hallo", Settings: Settings{Language: "en-GB", Engine: "auto", Rate: 100, Pitch: 100}}},
		{"v1", Request{Text: "Hallo", Settings: Settings{Language: "de-DE", Engine: "pico", Rate: 100, Pitch: 100}}},
		{"v1", Request{Text: "Hallo", Settings: Settings{Language: "de-DE", Engine: "auto", Rate: 110, Pitch: 100}}},
		{"v1", Request{Text: "Hallo", Settings: Settings{Language: "de-DE", Engine: "auto", Rate: 100, Pitch: 90}}},
	}
	seen := map[string]bool{k: true}
	for _, v := range variants {
		kk := Key(v.voice, v.r)
		if seen[kk] {
			t.Errorf("%s %+v: key collides", v.voice, v.r)
		}
		seen[kk] = true
	}
}

func TestToPCM(t *testing.T) {
	pcm, err := ToPCM(testWAV(16000, 16000))
	if err != nil {
		t.Fatal(err)
	}
	// One second at 16 kHz becomes one second at 48 kHz (the resampler
	// may hold back a few frames at the end).
	if len(pcm) < 47900 || len(pcm) > 48000 {
		t.Errorf("got %d frames, want about 48000", len(pcm))
	}
	var peak float64
	for _, f := range pcm {
		if f[0] != f[1] {
			t.Fatal("mono not copied to both channels")
		}
		peak = max(peak, f[0])
	}
	if peak < 0.2 || peak > 0.3 {
		t.Errorf("peak %.3f, want about 8000/32768", peak)
	}
	if _, err := ToPCM([]byte("RIFF garbage")); err == nil {
		t.Error("garbage decoded")
	}
}
