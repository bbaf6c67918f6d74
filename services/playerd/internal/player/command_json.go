package player

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// commandWire is Command as JSON: "value" is a number or, for sleep_timer,
// a word.
type commandWire struct {
	Action    string          `json:"action"`
	FolderID  string          `json:"folder_id,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
	ItemIndex *int            `json:"item_index,omitempty"`
	Mode      Mode            `json:"mode,omitempty"`
}

// UnmarshalJSON decodes a command strictly: an unknown field is an error
// even when the caller's decoder does not ask for that, since a typo in a
// command must never do something else. A string value lands in Until for
// sleep_timer and in Word for every other action, a boolean in On; the
// player refuses each where the action takes another kind.
func (c *Command) UnmarshalJSON(data []byte) error {
	var w commandWire
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	out := Command{Action: w.Action, FolderID: w.FolderID, ItemIndex: w.ItemIndex, Mode: w.Mode}
	v := bytes.TrimSpace(w.Value)
	switch {
	case len(v) == 0 || string(v) == "null":
	case v[0] == '"':
		word := &out.Word
		if w.Action == ActSleepTimer {
			word = &out.Until
		}
		if err := json.Unmarshal(v, word); err != nil {
			return err
		}
	case string(v) == "true" || string(v) == "false":
		on := string(v) == "true"
		out.On = &on
	default:
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return &json.UnmarshalTypeError{Value: jsonKind(v), Type: reflect.TypeFor[float64](), Field: "value"}
		}
		out.Value = &f
	}
	*c = out
	return nil
}

// MarshalJSON is the inverse of UnmarshalJSON.
func (c Command) MarshalJSON() ([]byte, error) {
	w := commandWire{Action: c.Action, FolderID: c.FolderID, ItemIndex: c.ItemIndex, Mode: c.Mode}
	var err error
	switch {
	case c.Until != "":
		w.Value, err = json.Marshal(c.Until)
	case c.Word != "":
		w.Value, err = json.Marshal(c.Word)
	case c.On != nil:
		w.Value, err = json.Marshal(*c.On)
	case c.Value != nil:
		w.Value, err = json.Marshal(*c.Value)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// jsonKind names the JSON type of a value that is not a number.
func jsonKind(v []byte) string {
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	}
	return "number"
}
