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

// Running is a clock.Clock that runs with the process's own time (inside a
// synctest bubble, the bubble's fake time, which moves only when every
// goroutine waits), for code that also waits on timers; a test steps its
// wall clock as network time does. Its methods are safe for concurrent
// use.
type Running struct {
	mu    sync.Mutex
	start time.Time     // the process's time when the clock was made
	shift time.Duration // the wall clock's lead over start + uptime
	wall  time.Time     // the wall clock at start
}

// NewRunning returns a running clock reading wall now.
func NewRunning(wall time.Time) *Running { return &Running{start: time.Now(), wall: wall} }

// Now is the wall clock.
func (c *Running) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall.Add(time.Since(c.start) + c.shift)
}

// Uptime is the process's time since NewRunning.
func (c *Running) Uptime() time.Duration { return time.Since(c.start) }

// Step sets the wall clock by d without time passing; d may be negative.
func (c *Running) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shift += d
}

// Set puts the wall clock at t without time passing.
func (c *Running) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shift = t.Sub(c.wall) - time.Since(c.start)
}
