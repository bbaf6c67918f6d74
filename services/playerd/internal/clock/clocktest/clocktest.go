// Package clocktest is a clock a test moves by hand.
package clocktest

import (
	"sync"
	"time"
)

// Clock is a clock.Clock that stands still until a test moves it. Its
// methods are safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	wall   time.Time
	uptime time.Duration
}

// New returns a clock reading wall, with no uptime yet.
func New(wall time.Time) *Clock { return &Clock{wall: wall} }

// Now is the wall clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

// Uptime is the time the clock was advanced by.
func (c *Clock) Uptime() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.uptime
}

// Advance lets d pass: both the wall clock and the uptime move on.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall, c.uptime = c.wall.Add(d), c.uptime+d
}

// Step sets the wall clock by d without time passing, as network time does
// to a box that booted with the wrong time; d may be negative.
func (c *Clock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
}

// Set puts the wall clock at t without time passing.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = t
}
