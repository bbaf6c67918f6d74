package settings

import (
	"errors"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
)

func TestHeadphoneSettings(t *testing.T) {
	d := Defaults().Audio
	if !d.Headphones || d.HeadphoneMaxVolume >= d.MaxVolume || d.HeadphoneDevice != "" {
		t.Errorf("defaults %+v: want headphones on, any USB card, a cap below max_volume", d)
	}
	for _, c := range []struct {
		edit func(*Audio)
		code string
	}{
		{func(a *Audio) { a.HeadphoneMaxVolume = 0 }, "settings_headphone_max_volume"},
		{func(a *Audio) { a.HeadphoneMaxVolume = 101 }, "settings_headphone_max_volume"},
		{func(a *Audio) { a.HeadphoneDevice = "hw:1,0;rm" }, "settings_headphone_device"},
		{func(a *Audio) { a.HeadphoneDevice = " USB" }, "settings_headphone_device"},
		{func(a *Audio) { a.HeadphoneDevice = strings.Repeat("a", 65) }, "settings_headphone_device"},
	} {
		s := Defaults()
		c.edit(&s.Audio)
		err := s.Validate()
		var fe *fault.Error
		if !errors.Is(err, fault.Invalid) || !errors.As(err, &fe) || fe.Code != c.code {
			t.Errorf("%+v: %v, want %s", s.Audio, err, c.code)
		}
	}
	for _, dev := range []string{"", "1", "hw:1,0", "USB Audio", "Headphones,0", "vc4-hdmi-0"} {
		s := Defaults()
		s.Audio.HeadphoneDevice, s.Audio.HeadphoneMaxVolume, s.Audio.Headphones = dev, 100, false
		if err := s.Validate(); err != nil {
			t.Errorf("%q refused: %v", dev, err)
		}
	}
	// A settings file from before the headphones keeps their defaults.
	s, err := Parse([]byte(`{"version":1,"audio":{"max_volume":50,"startup_volume":20,"announcement_volume":40}}`))
	if err != nil || !s.Audio.Headphones || s.Audio.HeadphoneMaxVolume != DefaultHeadphoneMaxVolume {
		t.Errorf("older document: %+v %v", s.Audio, err)
	}
}
