// Package gate bounds how many requests of one heavy kind run at once (a
// screenshot, a cover, a backup, an upload), so that what they hold in
// memory is bounded whatever clients ask. A few more may wait a moment for
// their turn, holding nothing meanwhile; beyond those a request is refused
// at once with fault.Busy and a Retry-After (429 at the API), never left to
// pile up.
package gate

import (
	"context"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Limits are a Gate's bounds.
type Limits struct {
	// Run is how many run at once (at least 1).
	Run int
	// Wait is how many more may wait for a turn, and Patience how long
	// each waits at most; zero: none waits.
	Wait     int
	Patience time.Duration
	// RetryAfter is what a refused client is told; zero: 1 s.
	RetryAfter time.Duration
}

// Gate admits requests of one kind.
type Gate struct {
	run, wait chan struct{}
	patience  time.Duration
	busy      error
}

// New returns a gate for requests of the kind what ("screenshots"), which
// names it in the refusal.
func New(what string, l Limits) *Gate {
	if l.RetryAfter <= 0 {
		l.RetryAfter = time.Second
	}
	return &Gate{
		run:      make(chan struct{}, max(l.Run, 1)),
		wait:     make(chan struct{}, max(l.Wait, 0)),
		patience: l.Patience,
		busy:     fault.Retry(fault.Busy, l.RetryAfter, "too many %s at once; try again later", what),
	}
}

// Enter takes a turn, waiting a moment if the gate is full and a waiting
// place is free. It returns leave, to be called once the request is done,
// or the refusal (fault.Busy). A request whose ctx ends while it waits is
// refused too.
func (g *Gate) Enter(ctx context.Context) (leave func(), err error) {
	select {
	case g.run <- struct{}{}:
		return g.leave, nil
	default:
	}
	select {
	case g.wait <- struct{}{}:
	default:
		return nil, g.busy
	}
	defer func() { <-g.wait }()
	t := time.NewTimer(g.patience)
	defer t.Stop()
	select {
	case g.run <- struct{}{}:
		return g.leave, nil
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, g.busy
}

func (g *Gate) leave() { <-g.run }
