package wiring

import (
	"errors"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
)

func TestJack(t *testing.T) {
	w := Default()
	w.GPIO.Buttons = []Button{{Line: 17, Action: BtnToggle}}
	for _, c := range []struct {
		jack *Jack
		err  string
	}{
		{nil, ""},
		{&Jack{Line: 27}, ""},
		{&Jack{Line: 27, Inverted: true}, ""},
		{&Jack{Line: 17}, "gpio.jack: line 17 is a button's"},
		{&Jack{Line: 512}, "gpio.jack: line must be 0..511"},
		{&Jack{Line: -1}, "gpio.jack: line must be 0..511"},
	} {
		w.GPIO.Jack = c.jack
		err := w.Validate()
		if c.err == "" && err != nil || c.err != "" && (!errors.Is(err, fault.Invalid) || err.Error() != c.err) {
			t.Errorf("%+v: %v, want %q", c.jack, err, c.err)
		}
	}
	if _, err := Parse([]byte(`{"version":1,"readers":[],"media_keys":true,"volume_step":5,"long_press_ms":3000,"gpio":{"chip":"auto","active_low":true,"bias":"pull-up","debounce_ms":20,"buttons":[],"jack":{"inverted":true}}}`)); err == nil || !strings.Contains(err.Error(), "gpio.jack needs its line") {
		t.Errorf("a jack without a line: %v", err)
	}
	w2, err := Parse([]byte(`{"version":1,"readers":[],"media_keys":true,"volume_step":5,"long_press_ms":3000,"gpio":{"chip":"auto","active_low":true,"bias":"pull-up","debounce_ms":20,"buttons":[],"jack":{"line":4}}}`))
	if err != nil || w2.GPIO.Jack == nil || w2.GPIO.Jack.Line != 4 {
		t.Fatalf("%+v %v", w2.GPIO.Jack, err)
	}
	c := w2.clone()
	c.GPIO.Jack.Line = 5
	if w2.GPIO.Jack.Line != 4 {
		t.Error("a clone shares the jack")
	}
	if !(Jack{}).PlugIn(true) || (Jack{}).PlugIn(false) || (Jack{Inverted: true}).PlugIn(true) || !(Jack{Inverted: true}).PlugIn(false) {
		t.Error("PlugIn")
	}
}
