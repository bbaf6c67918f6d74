// Package clock is the box's one notion of time, so that everything that
// judges time can be given the same clock in a test. The Pi has no
// real-time clock: it boots years in the past and network time steps the
// wall clock later, by hours or years, in either direction. Durations
// (sessions, windows, fades, idle time, save intervals) are measured on
// Uptime, which never jumps; calendar rules (bedtime windows, the day of
// the daily limit, certificates' validity) read Now. docs/faults.md ("The
// clock steps") lists which part reads which.
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

// Now is the wall clock, without Go's monotonic reading: a time from Now
// is a calendar time, and comparing two of them must not quietly measure
// a duration (which only Uptime does).
func (c *System) Now() time.Time { return time.Now().Round(0) }

// Uptime is the monotonic time since NewSystem.
func (c *System) Uptime() time.Duration { return time.Since(c.start) }

// Floor is the earliest time a set wall clock can read: this code did not
// exist before then. A Pi reads earlier until network time has set its
// clock (gokrazy starts it at the kernel's build time or at 1970).
var Floor = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// IsSet reports whether wall can be a reading of a clock that network time
// has set.
func IsSet(wall time.Time) bool { return !wall.Before(Floor) }
