package display

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// Restarts carry a parent's POST /api/admin/ui/restart from the API to the
// part that runs the touch screen: the API asks, the runner stops the
// screen, opens its devices anew and runs it again. Neither surface holds
// the other.
type Restarts struct {
	asked atomic.Uint64
	ask   chan struct{} // one pending restart serves every request before it
	done  atomic.Uint64 // restarts made
}

// NewRestarts is a Restarts nobody has asked yet.
func NewRestarts() *Restarts {
	return &Restarts{ask: make(chan struct{}, 1)}
}

// RestartScreen asks for a restart; it returns how many were asked so far.
func (r *Restarts) RestartScreen() uint64 {
	g := r.asked.Add(1)
	select {
	case r.ask <- struct{}{}:
	default:
	}
	return g
}

// Runner runs d until ctx ends, restarting it with devices opened anew by
// reopen whenever a restart is asked. Each call after the first, a
// supervisor's restart after a failure, opens them anew too: Run closed
// them when it ended. problem is told what went wrong on the way and
// restarted of each restart made (done) and of those asked.
func (r *Restarts) Runner(d *Display, reopen func(*Display) error, problem func(error), restarted func(done, asked uint64)) func(context.Context) error {
	var started bool
	return func(ctx context.Context) error {
		if started {
			if err := reopen(d); err != nil {
				problem(err)
			}
		}
		started = true
		for {
			asked, err := r.runUntilAsked(ctx, d)
			if !asked || ctx.Err() != nil {
				return err
			}
			if err != nil {
				problem(err)
			}
			if err := reopen(d); err != nil {
				problem(err)
			}
			restarted(r.done.Add(1), r.asked.Load())
		}
	}
}

// runUntilAsked runs the display until ctx ends, Run fails or a restart is
// asked (asked). Run runs in the caller's goroutine, so a panic reaches the
// supervisor's guard.
func (r *Restarts) runUntilAsked(ctx context.Context, d *Display) (asked bool, err error) {
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

// Attach gives the display a screen and a touch panel in place of those
// Run closed when it returned, for the next Run: the screen restarted on a
// parent's word (POST /api/admin/ui/restart) or after Run failed. The next
// frame is drawn whole onto the new screen. nil for either runs without
// it. A screen of another size than the display's frame is refused, and
// both are closed. Call it only while Run is not running.
func (d *Display) Attach(s Screen, t TouchSource) error {
	return d.attach(s, nil, t)
}

// Reopen opens the devices anew, as Open does, and attaches them. problems
// are what could not be opened (the display then runs headless or
// untouched, as after Open); err a screen that does not fit.
func (d *Display) Reopen(devs Devices) (problems error, err error) {
	var o Options
	probs, err := devs.open(&o)
	if err != nil {
		return nil, err
	}
	return errors.Join(probs...), d.attach(o.Screen, o.Backlight, o.Touch)
}

func (d *Display) attach(s Screen, bl Backlight, t TouchSource) error {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if s != nil && s.Size() != d.o.Size {
		err := fmt.Errorf("display: the new screen is %v, the display draws %v", s.Size(), d.o.Size)
		s.Close()
		if t != nil {
			t.Close()
		}
		return err
	}
	if d.o.Screen != nil && d.o.Screen != s {
		d.o.Screen.Close() // Run was not running: nothing else holds it
	}
	d.o.Screen, d.o.Touch = s, t
	if bl != nil {
		d.o.Backlight = bl
	}
	d.shown, d.lit = nil, -1 // the new screen has shown nothing yet
	return nil
}
