package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// Group runs the parts of a daemon and watches them. A part that fails is
// logged and, unless it is essential, restarted after a pause that doubles
// up to maxRestartWait: there is no part that runs once, since a
// convenience that failed may work a minute later and the pause keeps the
// log short. An essential part's failure is handed to the daemon (Failed),
// which ends (gokrazy restarts it). A part that panics is logged and
// restarted like a failure: on the box, a child's music must not stop
// because the screen or a card reader broke.
type Group struct {
	log    *slog.Logger
	wg     sync.WaitGroup
	failed chan error // the first failure of an essential part
}

const maxRestartWait = time.Minute

// NewGroup returns a group of parts that logs to log.
func NewGroup(log *slog.Logger) *Group {
	return &Group{log: log, failed: make(chan error, 1)}
}

// Essential runs a part the box cannot run without; its failure is
// delivered on Failed.
func (s *Group) Essential(ctx context.Context, name string, run func(context.Context) error) {
	s.wg.Go(func() {
		if err := run(ctx); err != nil && ctx.Err() == nil {
			select {
			case s.failed <- fmt.Errorf("%s: %w", name, err):
			default:
			}
		}
	})
}

// Restarting runs a part again whenever it fails or panics before ctx
// ends. A part that returns nil is done and stays so.
func (s *Group) Restarting(ctx context.Context, name string, run func(context.Context) error) {
	s.wg.Go(func() {
		retry := Backoff{Max: maxRestartWait}
		for {
			err := s.guard(ctx, run)
			if err == nil || ctx.Err() != nil {
				return
			}
			s.log.Error(name+" failed, restarting", "error", err)
			if !retry.Wait(ctx) {
				return
			}
		}
	})
}

// guard turns a panic of run into an error, with the top of the stack for
// the log.
func (s *Group) guard(ctx context.Context, run func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			stack := debug.Stack()
			err = fmt.Errorf("panic: %v\n%s", v, stack[:min(len(stack), 2048)])
		}
	}()
	return run(ctx)
}

// Failed delivers the first failure of an essential part.
func (s *Group) Failed() <-chan error { return s.failed }

// Wait waits for every part to stop.
func (s *Group) Wait() { s.wg.Wait() }
