package rules

import (
	"time"

	"github.com/storybox/storybox/services/playerd/internal/clock"
)

// Clock is the time the rules go by: the wall clock for windows and days,
// the uptime for listening and fades. Tests pass a fake one.
type Clock = clock.Clock

// SystemClock returns the real clock.
func SystemClock() Clock { return clock.NewSystem() }

// Zone gives the time zone the windows and the day are read in. It is
// asked each time, so a change of the setting applies at once.
type Zone func() *time.Location

// LocalZone is the zone of the process (TZ, /etc/localtime), UTC without
// either.
func LocalZone() *time.Location { return time.Local }

// How far the rules trust the clock, as GET /api/status tells it.
const (
	ClockSet       = "set"       // the wall clock is past clock.Floor: network time is set
	ClockEstimated = "estimated" // the last time saved plus the uptime since playerd started
	ClockUnknown   = "unknown"   // neither: time windows are not judged
)

// estimator tells the time when the clock cannot: the newest time saved
// (before a restart or power cut) plus the uptime since this start. After
// a power cut it lags by as long as the box was off, so windows come late
// rather than never.
type estimator struct {
	clock      Clock
	base       time.Time     // the last time known from a set clock
	baseUptime time.Duration // the uptime when base was true
}

func (e *estimator) now() (time.Time, string) {
	wall := e.clock.Now()
	if clock.IsSet(wall) {
		e.base, e.baseUptime = wall, e.clock.Uptime()
		return wall, ClockSet
	}
	if !e.base.IsZero() {
		return e.base.Add(e.clock.Uptime() - e.baseUptime), ClockEstimated
	}
	return wall, ClockUnknown
}
