// Package clock is the box's one notion of time, so that everything that
// judges time can be given the same clock in a test. The Pi has no
// real-time clock: it boots years in the past and network time steps the
// wall clock later, by hours or years. Durations (sessions, fades, idle
// time) are measured on Uptime, which never jumps; calendar rules (bedtime
// windows, the day of the daily limit, certificates' validity) read Now.
package clock

import "time"

// Clock tells the time.
type Clock interface {
	// Now is the wall clock; it may step in either direction.
	Now() time.Time
	// Uptime is the monotonic time since the clock was made; it never
	// jumps.
	Uptime() time.Duration
}

// System is the machine's clock.
type System struct{ start time.Time }

// NewSystem returns the machine's clock; its Uptime starts now.
func NewSystem() *System { return &System{start: time.Now()} }

// Now is the wall clock.
func (c *System) Now() time.Time { return time.Now() }

// Uptime is the monotonic time since NewSystem.
func (c *System) Uptime() time.Duration { return time.Since(c.start) }
