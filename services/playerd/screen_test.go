package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/display/displaytest"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// panicOnce is a player whose first status read panics, as a bug in the
// screen's drawing would.
type panicOnce struct{ calls atomic.Int32 }

func (p *panicOnce) Status() player.Status {
	if p.calls.Add(1) == 1 {
		panic("first frame")
	}
	return player.Status{State: player.Stopped, Index: -1, Volume: 30, MaxVolume: 50}
}

func (p *panicOnce) Do(context.Context, player.Command) (player.Status, error) {
	return p.Status(), nil
}

// A screen whose Run fails is restarted by the supervision with its
// devices opened anew: Run closed them, and before, the restarted screen
// drew on nothing.
func TestScreenReopenedAfterAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := &restartScreen{Screen: displaytest.NewScreen()}
		d, err := display.New(display.Options{Player: &panicOnce{}, Screen: first})
		if err != nil {
			t.Fatal(err)
		}
		opened := make(chan *restartScreen, 1)
		reopen := func(d *display.Display) error {
			s := &restartScreen{Screen: displaytest.NewScreen()}
			opened <- s
			return d.Attach(s, nil)
		}
		log := slog.New(slog.DiscardHandler)
		ctx, cancel := context.WithCancel(context.Background())
		sup := daemon.NewGroup(log)
		sup.Restarting(ctx, "display", runScreen(d, reopen, display.NewRestarts(), log))
		synctest.Wait() // the first Run failed; the supervision waits to restart
		if closes, _ := first.state(); closes != 1 {
			t.Fatalf("the failed Run closed its screen %d times", closes)
		}
		select { // after the pause (fake time in the bubble)
		case s := <-opened:
			<-s.Shown() // a frame on the screen opened anew
		case <-time.After(time.Minute):
			t.Fatal("the supervision ran the screen again without opening it")
		}
		cancel()
		sup.Wait()
	})
}
