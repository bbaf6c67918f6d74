package main

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/storybox/storybox/services/playerd/internal/display"
)

// screenRestarts carry POST /api/admin/ui/restart from the API to the part
// that runs the touch screen (runScreen): the API asks, the supervision
// stops the screen, opens the framebuffer and touch panel anew and runs it
// again. Neither surface holds the other.
type screenRestarts struct {
	asked atomic.Uint64
	ask   chan struct{} // one pending restart serves every request before it
	done  atomic.Uint64 // restarts made, for the log
}

func newScreenRestarts() *screenRestarts {
	return &screenRestarts{ask: make(chan struct{}, 1)}
}

// RestartScreen implements api.ScreenRestarts.
func (r *screenRestarts) RestartScreen() uint64 {
	g := r.asked.Add(1)
	select {
	case r.ask <- struct{}{}:
	default:
	}
	return g
}

// runScreen runs the display until ctx ends, restarting it with newly
// opened devices whenever a restart is asked. Each call after the first,
// the supervision's restart after a failure, opens them anew too: Run
// closed them when it ended.
func runScreen(d *display.Display, reopen func(*display.Display) error, r *screenRestarts, log *slog.Logger) func(context.Context) error {
	var started bool
	return func(ctx context.Context) error {
		if started {
			if err := reopen(d); err != nil {
				log.Warn("display", "error", err)
			}
		}
		started = true
		for {
			asked, err := r.runUntilAsked(ctx, d)
			if !asked || ctx.Err() != nil {
				return err
			}
			if err != nil {
				log.Warn("display", "error", err)
			}
			if err := reopen(d); err != nil {
				log.Warn("display", "error", err)
			}
			log.Info("screen restarted", "restarts", r.done.Add(1), "asked", r.asked.Load())
		}
	}
}

// runUntilAsked runs the display until ctx ends, Run fails or a restart is
// asked (asked). Run runs in the caller's goroutine, so a panic reaches the
// supervision's guard.
func (r *screenRestarts) runUntilAsked(ctx context.Context, d *display.Display) (asked bool, err error) {
	runCtx, stop := context.WithCancel(ctx)
	var wanted atomic.Bool
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-r.ask:
			wanted.Store(true)
			stop()
		case <-runCtx.Done():
		}
	}()
	defer func() {
		stop()
		<-watched
	}()
	err = d.Run(runCtx)
	return wanted.Load(), err
}

// screenReopener opens the screen's devices as openDisplay did: the test's
// screen and touch panel when it gives them, else the -fb and -touch
// devices. What cannot be opened is logged; the screen then runs headless
// or untouched, as at the start.
func screenReopener(cfg Config, h hooks, log *slog.Logger) func(*display.Display) error {
	return func(d *display.Display) error {
		if h.screen != nil || h.touch != nil {
			var t display.TouchSource
			if h.touch != nil {
				t = h.touch()
			}
			return d.Attach(h.screen, t)
		}
		problems, err := d.Reopen(cfg.Display)
		if problems != nil {
			log.Warn("display", "error", problems)
		}
		return err
	}
}
