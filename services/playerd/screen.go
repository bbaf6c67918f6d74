package main

import (
	"context"
	"log/slog"

	"github.com/storybox/storybox/services/playerd/internal/display"
)

// runScreen runs the touch screen under the supervision, restarting it
// when the API asks (restarts) or after a failure, and logs what happens.
func runScreen(d *display.Display, reopen func(*display.Display) error, restarts *display.Restarts, log *slog.Logger) func(context.Context) error {
	return restarts.Runner(d, reopen,
		func(err error) { log.Warn("display", "error", err) },
		func(done, asked uint64) { log.Info("screen restarted", "restarts", done, "asked", asked) })
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
