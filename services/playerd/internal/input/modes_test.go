package input

import (
	"context"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/input/gpio"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// The buttons of issue 36 on GPIO lines: shuffle and repeat go on from
// the status the press finds, the seeks skip 10 s (held: back, the
// audiobook skip), calm switches the setting.
func TestModeButtons(t *testing.T) {
	b := startBench(t, gpioWiring(Button{Line: 5, Action: BtnShuffle}, Button{Line: 6, Action: BtnRepeat}, Button{Line: 26, Action: BtnRepeat},
		Button{Line: 13, Action: BtnSeekForward, LongAction: BtnSeekBack}, Button{Line: 21, Action: BtnSeekForward}, Button{Line: 19, Action: BtnCalm}))
	calm := make(chan struct{}, 2)
	b.m.o.ToggleCalm = func(context.Context) error { calm <- struct{}{}; return nil }
	var lines *fakeLines
	select {
	case lines = <-b.chip.opened:
	case <-time.After(patience):
		t.Fatal("lines not opened")
	}
	press := func(line int) { lines.events <- gpio.Event{Offset: line, Active: true} }
	release := func(line int) { lines.events <- gpio.Event{Offset: line, Active: false} }
	next := func() player.Command {
		t.Helper()
		select {
		case c := <-b.rec.cmds:
			return c
		case <-time.After(patience):
			t.Fatal("no command")
		}
		return player.Command{}
	}

	b.rec.mu.Lock()
	b.rec.status = player.Status{Shuffle: true, Repeat: player.RepeatFolder}
	b.rec.mu.Unlock()
	press(5)
	if c := next(); c.Action != player.ActShuffle || c.On == nil || *c.On {
		t.Errorf("shuffle over shuffle on: %+v", c)
	}
	release(5)
	press(6)
	if c := next(); c.Action != player.ActRepeat || c.Word != player.RepeatTrack {
		t.Errorf("repeat after folder: %+v", c)
	}
	release(6)
	b.rec.mu.Lock()
	b.rec.status = player.Status{Repeat: player.RepeatTrack}
	b.rec.mu.Unlock()
	press(26) // another button: line 6's release is still settling
	if c := next(); c.Action != player.ActRepeat || c.Word != player.RepeatOff {
		t.Errorf("repeat after track: %+v", c)
	}
	release(26)

	// A seek button acts on the press; one with a long action, held,
	// skips back once and does nothing on release (a short press of it
	// acting on release is the machine's, TestMachine).
	press(21)
	if c := next(); c.Action != player.ActSeekDelta || c.Value == nil || *c.Value != 10 {
		t.Errorf("seek forward: %+v", c)
	}
	release(21)
	press(13)
	if c := next(); c.Action != player.ActSeekDelta || c.Value == nil || *c.Value != -10 {
		t.Errorf("held seek: %+v", c)
	}
	release(13)
	press(19)
	select {
	case <-calm:
	case <-time.After(patience):
		t.Fatal("calm button did not switch calm mode")
	}
	select {
	case c := <-b.rec.cmds:
		t.Errorf("a command after the release of a held button or the calm button: %+v", c)
	default:
	}
}
