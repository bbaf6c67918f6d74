package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// supervisor runs the parts of the box and watches them. A part that fails
// is logged; one that can be restarted is, after a pause that doubles up
// to maxRestartWait; the core's failure ends the box (gokrazy restarts
// playerd). A surface that panics is logged and restarted like a failure:
// a child's music must not stop because the screen or a card reader broke.
type supervisor struct {
	log    *slog.Logger
	wg     sync.WaitGroup
	failed chan error // the first failure of an essential part
}

const maxRestartWait = time.Minute

func newSupervisor(log *slog.Logger) *supervisor {
	return &supervisor{log: log, failed: make(chan error, 1)}
}

// essential runs a part the box cannot run without; its failure is
// delivered on Failed.
func (s *supervisor) essential(ctx context.Context, name string, run func(context.Context) error) {
	s.wg.Go(func() {
		if err := run(ctx); err != nil && ctx.Err() == nil {
			select {
			case s.failed <- fmt.Errorf("%s: %w", name, err):
			default:
			}
		}
	})
}

// restarting runs a part again whenever it fails or panics before ctx
// ends. A part that returns nil is done and stays so.
func (s *supervisor) restarting(ctx context.Context, name string, run func(context.Context) error) {
	s.wg.Go(func() {
		wait := time.Second
		for {
			err := s.guard(ctx, run)
			if err == nil || ctx.Err() != nil {
				return
			}
			s.log.Error(name+" failed, restarting", "error", err, "in", wait)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			wait = min(2*wait, maxRestartWait)
		}
	})
}

// once runs a part whose failure is only logged: it is a convenience the
// box works without, and trying again would fail the same way.
func (s *supervisor) once(ctx context.Context, name string, run func(context.Context) error) {
	s.wg.Go(func() {
		if err := s.guard(ctx, run); err != nil && ctx.Err() == nil {
			s.log.Warn(name+" off", "error", err)
		}
	})
}

// guard turns a panic of run into an error, with the top of the stack for
// the log.
func (s *supervisor) guard(ctx context.Context, run func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			stack := debug.Stack()
			err = fmt.Errorf("panic: %v\n%s", v, stack[:min(len(stack), 2048)])
		}
	}()
	return run(ctx)
}

// Failed delivers the first failure of an essential part.
func (s *supervisor) Failed() <-chan error { return s.failed }

// Wait waits for every part to stop.
func (s *supervisor) Wait() { s.wg.Wait() }
