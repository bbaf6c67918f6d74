package cards

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// mappingFields are a mapping's fields on the wire: "value" is a number,
// a boolean (On) or a word (Word), as in the player's commands.
type mappingFields struct {
	Action   string          `json:"action"`
	FolderID string          `json:"folder_id,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
	Name     string          `json:"name,omitempty"`
	SameCard string          `json:"same_card,omitempty"`
	Mode     string          `json:"mode,omitempty"`
}

// UnmarshalJSON decodes a mapping strictly: an unknown field is an error
// even inside a document whose decoder does not ask for that.
func (m *Mapping) UnmarshalJSON(data []byte) error {
	var w mappingFields
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	out := Mapping{Action: w.Action, FolderID: w.FolderID, Name: w.Name, SameCard: w.SameCard, Mode: w.Mode}
	v := bytes.TrimSpace(w.Value)
	switch {
	case len(v) == 0 || string(v) == "null":
	case v[0] == '"':
		if err := json.Unmarshal(v, &out.Word); err != nil {
			return err
		}
	case string(v) == "true" || string(v) == "false":
		on := string(v) == "true"
		out.On = &on
	default:
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("value must be a number, true, false or a word")
		}
		out.Value = &f
	}
	*m = out
	return nil
}

func (m Mapping) fields() (mappingFields, error) {
	w := mappingFields{Action: m.Action, FolderID: m.FolderID, Name: m.Name, SameCard: m.SameCard, Mode: m.Mode}
	var err error
	switch {
	case m.Word != "":
		w.Value, err = json.Marshal(m.Word)
	case m.On != nil:
		w.Value, err = json.Marshal(*m.On)
	case m.Value != nil:
		w.Value, err = json.Marshal(*m.Value)
	}
	return w, err
}

// MarshalJSON is the inverse of UnmarshalJSON.
func (m Mapping) MarshalJSON() ([]byte, error) {
	w, err := m.fields()
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// WithID is the mapping with its card's id, as the API answers for one
// card.
func (m Mapping) WithID(id string) any {
	w, err := m.fields()
	if err != nil {
		w = mappingFields{Action: m.Action, FolderID: m.FolderID, Name: m.Name}
	}
	return struct {
		ID string `json:"id"`
		mappingFields
	}{id, w}
}
