package api

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// FuzzDecodeObject: whatever the body, the API's decoder either refuses it with a
// 4xx requestError or yields a command that encodes back to valid JSON with
// finite numbers. It never panics.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{
		`{"action":"play"}`, `{"action":"volume","value":12.5}`, `{"action":"resume","folder_id":"ab","item_index":3}`,
		`{"action":"seek","value":-1e308}`, `{"a":1}`, `[]`, `{"action":"x"} {}`, `{"value":NaN}`, "\x00{", `{"action":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var cmd player.Command
		err := jsonBody.Unmarshal(data, &cmd)
		if err != nil {
			if st := fault.HTTPStatus(fault.KindOf(err)); st < 400 || st > 499 || fault.Message(err) == "" {
				t.Fatalf("error %v is not a client error", err)
			}
			return
		}
		if cmd.Value != nil && (math.IsNaN(*cmd.Value) || math.IsInf(*cmd.Value, 0)) {
			t.Fatalf("decoded a non-finite value from %q", data)
		}
		if _, err := json.Marshal(cmd); err != nil {
			t.Fatalf("decoded command does not encode: %v", err)
		}
	})
}
