package cards

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

func yes() *bool { on := true; return &on }

// The actions of issue 36: each becomes its player command (calm its
// setting), with the mapping's value in the command's kind of value.
func TestModeActions(t *testing.T) {
	f := newFixture(t)
	var calm []bool
	f.svc.o.SetCalm = func(_ context.Context, on bool) error { calm = append(calm, on); return nil }
	off := false
	f.put(t, "1", Mapping{Action: ActShuffle, On: yes()})
	f.put(t, "2", Mapping{Action: ActRepeat, Word: player.RepeatTrack})
	f.put(t, "3", Mapping{Action: ActSeekDelta, Value: num(-10)})
	f.put(t, "4", Mapping{Action: ActCalm, On: &off})
	f.put(t, "5", Mapping{Action: ActFolder, FolderID: "f1", Mode: string(player.ModeSingle)})
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		if r := f.read(id); r.Outcome != OutDone && r.Outcome != OutStarted {
			t.Errorf("card %s: %+v", id, r)
		}
	}
	cmds := f.player.commands()
	if len(cmds) != 4 {
		t.Fatalf("commands %+v, want four (calm is a setting)", cmds)
	}
	if c := cmds[0]; c.Action != player.ActShuffle || c.On == nil || !*c.On {
		t.Errorf("shuffle card: %+v", c)
	}
	if c := cmds[1]; c.Action != player.ActRepeat || c.Word != player.RepeatTrack {
		t.Errorf("repeat card: %+v", c)
	}
	if c := cmds[2]; c.Action != player.ActSeekDelta || c.Value == nil || *c.Value != -10 {
		t.Errorf("seek_delta card: %+v", c)
	}
	if c := cmds[3]; c.Action != player.ActFolder || c.Mode != player.ModeSingle {
		t.Errorf("folder card with a mode: %+v", c)
	}
	if len(calm) != 1 || calm[0] {
		t.Errorf("calm card: %v", calm)
	}
	// Without a way to switch it, a calm card fails and says so.
	f.svc.o.SetCalm = nil
	if r := f.read("4"); r.Outcome != OutFailed || r.Error == "" {
		t.Errorf("calm card without SetCalm: %+v", r)
	}
}

func TestModeActionsValidated(t *testing.T) {
	for _, bad := range []string{
		`{"action":"shuffle"}`,
		`{"action":"shuffle","value":1}`,
		`{"action":"calm","value":"on"}`,
		`{"action":"repeat","value":"sometimes"}`,
		`{"action":"repeat","value":true}`,
		`{"action":"seek_delta","value":0}`,
		`{"action":"seek_delta","value":601}`,
		`{"action":"seek_delta","value":1.5}`,
		`{"action":"stop","value":true}`,
		`{"action":"volume_delta","value":"up"}`,
		`{"action":"resume","folder_id":"f1","mode":"shuffle"}`,
		`{"action":"folder","folder_id":"f1","mode":"party"}`,
		`{"action":"shuffle","value":true,"extra":1}`,
	} {
		var m Mapping
		err := json.Unmarshal([]byte(bad), &m)
		if err == nil {
			err = m.Normalized().Validate()
			if fault.KindOf(err) != fault.Invalid {
				t.Errorf("%s: %v, want invalid", bad, err)
			}
		}
		if err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	// Each value kind survives the document's round trip.
	for _, good := range []string{
		`{"action":"shuffle","value":true}`,
		`{"action":"calm","value":false}`,
		`{"action":"repeat","value":"folder"}`,
		`{"action":"seek_delta","value":-10}`,
		`{"action":"folder","folder_id":"f1","same_card":"next","mode":"random_one"}`,
	} {
		var m Mapping
		if err := json.Unmarshal([]byte(good), &m); err != nil {
			t.Fatalf("%s: %v", good, err)
		}
		if err := m.Validate(); err != nil {
			t.Errorf("%s: %v", good, err)
		}
		out, _ := json.Marshal(m)
		if string(out) != good {
			t.Errorf("round trip: %s, want %s", out, good)
		}
		id, _ := json.Marshal(m.WithID("7"))
		if !strings.HasPrefix(string(id), `{"id":"7","action"`) {
			t.Errorf("with id: %s", id)
		}
	}
}
