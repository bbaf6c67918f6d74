package display

import (
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/player"
)

// The now-playing screen's switches: shuffle toggles, repeat goes off →
// folder → track → off, each a command through the player's one path, and
// the screen shows what the player then has.
func TestShuffleAndRepeatButtons(t *testing.T) {
	st := playingStatus()
	st.Repeat = player.RepeatOff
	p := newFakePlayer(st)
	d, _ := newTestDisplay(t, p, nil)
	snap(t, d)
	tap := func(what, act string) {
		t.Helper()
		tapWhere(t, d, what, func(a action) bool { return a.kind == actCommand && a.cmd.Action == act })
	}
	tap("shuffle", player.ActShuffle)
	tap("shuffle", player.ActShuffle)
	for range 3 {
		tap("repeat", player.ActRepeat)
	}
	cmds := p.commands()
	if len(cmds) != 5 {
		t.Fatalf("commands %+v", cmds)
	}
	for i, on := range []bool{true, false} {
		if c := cmds[i]; c.Action != player.ActShuffle || c.On == nil || *c.On != on {
			t.Errorf("shuffle tap %d sent %+v, want %v", i, c, on)
		}
	}
	for i, want := range []string{player.RepeatFolder, player.RepeatTrack, player.RepeatOff} {
		if c := cmds[2+i]; c.Action != player.ActRepeat || c.Word != want {
			t.Errorf("repeat tap %d sent %+v, want %s", i, c, want)
		}
	}
	// The buttons follow the player, not the taps: lit, their next tap
	// switches off.
	p.set(func(s *player.Status) { s.Shuffle, s.Repeat = true, player.RepeatTrack })
	snap(t, d)
	d.rmu.Lock()
	defer d.rmu.Unlock()
	seen := 0
	for _, tg := range d.targets {
		switch c := tg.act.cmd; c.Action {
		case player.ActShuffle:
			seen++
			if *c.On {
				t.Errorf("shuffle on: the next tap sends %+v", c)
			}
		case player.ActRepeat:
			seen++
			if c.Word != player.RepeatOff {
				t.Errorf("repeat track: the next tap sends %+v", c)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d switches on screen", seen)
	}
}
