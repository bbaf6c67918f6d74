package player

import (
	"context"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// The floor holds for every way a volume is set by a child or a parent:
// the API, the screen, cards and buttons all arrive as volume or
// volume_delta commands with their caller.
func TestVolumeNeverBelowMinimum(t *testing.T) {
	h := newHarness(t, catalog{}, Config{MaxVolume: 80, MinVolume: 20, StartVolume: 30}, &recSink{})
	for _, via := range []auth.Via{auth.Network, auth.Loopback, auth.Touch, auth.Card, auth.Button, auth.HomeAutomation} {
		ctx := auth.WithCaller(context.Background(), auth.Caller{Via: via})
		for _, s := range []struct {
			cmd  Command
			want int
		}{
			{Command{Action: ActVolume, Value: val(50)}, 50},
			{Command{Action: ActVolume, Value: val(0)}, 20},
			{Command{Action: ActVolume, Value: val(19)}, 20},
			{Command{Action: ActVolumeDelta, Value: val(5)}, 25},
			{Command{Action: ActVolumeDelta, Value: val(-10)}, 20},
			{Command{Action: ActVolumeDelta, Value: val(-100)}, 20},
			{Command{Action: ActVolume, Value: val(100)}, 80},
		} {
			st, err := h.p.Do(ctx, s.cmd)
			if err != nil || st.Volume != s.want {
				t.Errorf("%s: %s %v: volume %d (%v), want %d", via, s.cmd.Action, *s.cmd.Value, st.Volume, err, s.want)
			}
		}
	}
	// pause and stop do not touch the volume: silence is theirs.
	for _, a := range []string{ActPause, ActStop} {
		if st, _ := h.p.Do(context.Background(), Command{Action: a}); st.Volume != 80 {
			t.Errorf("%s: volume %d, want 80 kept", a, st.Volume)
		}
	}
}

// The sleep timer's fade is the parental rules' (auth.Internal): it goes
// on below the floor to silence, then pauses; the next volume anyone else
// sets is held at the floor again.
func TestRulesFadeGoesBelowMinimum(t *testing.T) {
	h := newHarness(t, catalog{}, Config{MaxVolume: 80, MinVolume: 20, StartVolume: 30}, &recSink{})
	rules := auth.WithCaller(context.Background(), auth.Caller{Via: auth.Internal})
	if st, err := h.p.Do(rules, Command{Action: ActVolume, Value: val(3)}); err != nil || st.Volume != 3 {
		t.Fatalf("rules' fade step: volume %d (%v), want 3", st.Volume, err)
	}
	child := auth.WithCaller(context.Background(), auth.Caller{Via: auth.Card})
	if st, _ := h.p.Do(child, Command{Action: ActVolumeDelta, Value: val(1)}); st.Volume != 20 {
		t.Errorf("card after the fade: volume %d, want the floor 20", st.Volume)
	}
}

// A new minimum raises a quieter volume at once; a cap below the floor
// (a maximum lowered under it) wins.
func TestSetVolumesAppliesTheMinimum(t *testing.T) {
	h := newHarness(t, catalog{}, Config{MaxVolume: 80, StartVolume: 10}, &recSink{})
	if v := h.p.Status().Volume; v != 10 {
		t.Fatalf("start volume %d, want 10", v)
	}
	ctx := context.Background()
	if st, err := h.p.SetVolumes(ctx, Volumes{Max: 80, Start: 30, Announce: 70, Min: 25}); err != nil || st.Volume != 25 {
		t.Errorf("min 25: volume %d (%v), want 25", st.Volume, err)
	}
	if _, err := h.p.SetVolumes(ctx, Volumes{Max: 20, Start: 20, Announce: 70, Min: 25}); err == nil {
		t.Error("minimum above the maximum accepted")
	}
	if st, _ := h.p.SetVolumes(ctx, Volumes{Max: 15, Start: 15, Announce: 70, Min: 15}); st.Volume != 15 {
		t.Errorf("max 15 min 15: volume %d", st.Volume)
	}
}

// After a restart the volume is at least the floor: a box left quiet, or
// a startup volume below a newer minimum, starts at the minimum.
func TestRestoredVolumeRaisedToMinimum(t *testing.T) {
	for _, c := range []struct{ saved, start, min, want int }{
		{5, 30, 20, 20},  // left below the floor
		{0, 30, 40, 40},  // first start, startup volume below the floor
		{50, 30, 20, 30}, // left loud: the startup volume, above the floor
		{25, 30, 20, 25}, // left quiet, above the floor: stays
	} {
		p := New(Config{Catalog: catalog{}, MaxVolume: 80, MinVolume: c.min, StartVolume: c.start, Restored: state.Saved{Volume: c.saved}})
		if got := p.Status().Volume; got != c.want {
			t.Errorf("saved %d start %d min %d: volume %d, want %d", c.saved, c.start, c.min, got, c.want)
		}
	}
}
