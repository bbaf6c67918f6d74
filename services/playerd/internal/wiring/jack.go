package wiring

import (
	"bytes"
	"encoding/json"
)

// Jack is the sound board's headphone jack-detect line: where a board has
// one, the box moves the sound to the headphones while a plug is in, as it
// does for USB headphones (settings: audio.headphones).
type Jack struct {
	// Line is the line offset on gpio.chip, read with gpio's active_low,
	// bias and debounce like the buttons.
	Line int `json:"line"`
	// Inverted: the line reads inactive while a plug is in.
	Inverted bool `json:"inverted"`
}

// UnmarshalJSON reads the jack whole, line required, as a button's.
func (j *Jack) UnmarshalJSON(data []byte) error {
	var v struct {
		Line     *int `json:"line"`
		Inverted bool `json:"inverted"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if v.Line == nil {
		return invalid("gpio.jack needs its line")
	}
	*j = Jack{Line: *v.Line, Inverted: v.Inverted}
	return nil
}

// checkJack: a line of its own, not a button's.
func (g GPIO) checkJack(buttons map[int]bool) error {
	j := g.Jack
	switch {
	case j == nil:
		return nil
	case j.Line < 0 || j.Line > maxLine:
		return invalid("gpio.jack: line must be 0..%d", maxLine)
	case buttons[j.Line]:
		return invalid("gpio.jack: line %d is a button's", j.Line)
	}
	return nil
}

// PlugIn reports whether the jack's line, read active or not, says a plug
// is in.
func (j Jack) PlugIn(active bool) bool { return active != j.Inverted }
