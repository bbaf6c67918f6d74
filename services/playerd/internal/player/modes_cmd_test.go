package player

import (
	"encoding/json"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
)

// TestModeCommandsRefuseBadValues: every malformed mode command is a clear
// Invalid and changes nothing.
func TestModeCommandsRefuseBadValues(t *testing.T) {
	cat := catalog{"f": folderOf(t, "f", 1, 1)}
	h := newHarness(t, cat, Config{}, &recSink{})
	h.do(Command{Action: ActFolder, FolderID: "f"})
	before := h.do(Command{Action: ActPause})
	for _, in := range []string{
		`{"action":"shuffle"}`,
		`{"action":"shuffle","value":1}`,
		`{"action":"shuffle","value":"on"}`,
		`{"action":"repeat","value":"album"}`,
		`{"action":"repeat","value":true}`,
		`{"action":"repeat"}`,
		`{"action":"seek_delta"}`,
		`{"action":"seek_delta","value":"10"}`,
		`{"action":"seek_delta","value":true}`,
		`{"action":"folder","folder_id":"f","mode":"party"}`,
		`{"action":"play","mode":"shuffle"}`,
		`{"action":"volume","value":true}`,
		`{"action":"sleep_timer","value":false}`,
	} {
		var c Command
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		h.fails(c, fault.Invalid)
	}
	after := h.p.Status()
	if after.Shuffle != before.Shuffle || after.Repeat != before.Repeat || after.Index != before.Index || after.Mode != before.Mode || after.Position != before.Position {
		t.Errorf("refused commands changed the status: %+v → %+v", before, after)
	}
}
