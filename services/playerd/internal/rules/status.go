package rules

import (
	"fmt"
	"math"
	"time"
)

// Restrictions is what the rules do right now, for GET /api/status and the
// touch screen.
type Restrictions struct {
	// Active is the rule that refuses starting music now (bedtime content
	// inside bedtime aside): ReasonBedtime, ReasonDailyLimit or null.
	Active *string `json:"active"`
	// Message is what such a start is told ("bedtime until 07:00"), and
	// Until when the rule ends; null when nothing is active.
	Message *string    `json:"message"`
	Until   *time.Time `json:"until"`
	// Bedtime is the night in force, null outside bedtime.
	Bedtime *BedtimeState `json:"bedtime"`
	// DailyLimit is today's limit and counter, null without a limit today.
	DailyLimit *LimitState `json:"daily_limit"`
	// SleepTimer is the timer set, null when none.
	SleepTimer *SleepState `json:"sleep_timer"`
	// LockedFolders is how many folders only an administrator starts.
	LockedFolders int `json:"locked_folders"`
	// Clock is how the time is known: "set" (network time), "estimated"
	// (the last time saved plus the time since start: the Pi has no
	// real-time clock, so after a power cut it lags by the time the box
	// was off), "unknown" (never set: bedtime is not judged, the limit
	// counts for the last day known).
	Clock string `json:"clock"`
}

// BedtimeState is the night in force.
type BedtimeState struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// NightMaxVolume caps the volume until then; null when none is set.
	NightMaxVolume *int `json:"night_max_volume"`
}

// LimitState is today's listening.
type LimitState struct {
	Minutes     int  `json:"minutes"`
	UsedSeconds int  `json:"used_seconds"`
	LeftSeconds int  `json:"left_seconds"`
	MinutesLeft int  `json:"minutes_left"` // rounded up, for a display
	Reached     bool `json:"reached"`
}

// SleepState is the sleep timer.
type SleepState struct {
	// Until is "time" (minutes), "track" or "folder".
	Until string `json:"until"`
	// For "time": the minutes set, when it ends and the seconds left.
	Minutes     *int       `json:"minutes"`
	EndsAt      *time.Time `json:"ends_at"`
	LeftSeconds *int       `json:"left_seconds"`
}

// Restrictions returns what the rules do now.
func (k *Keeper) Restrictions() Restrictions {
	k.mu.Lock()
	defer k.mu.Unlock()
	m := k.at()
	return k.restrictions(m)
}

func (k *Keeper) restrictions(m moment) Restrictions {
	r := Restrictions{LockedFolders: len(k.rules.LockedFolders), Clock: m.clock}
	var active *Refusal
	if m.in {
		b := &BedtimeState{Since: m.night.start.In(m.loc), Until: m.night.end.In(m.loc)}
		if v := k.rules.Bedtime.NightMaxVolume; v > 0 {
			b.NightMaxVolume = &v
		}
		r.Bedtime = b
		active = bedtimeRefusal(m)
	}
	if lim, ok := k.limit(m); ok {
		used := int(k.use.Seconds)
		left := max(0, int(math.Ceil(lim-k.use.Seconds)))
		r.DailyLimit = &LimitState{Minutes: int(lim / 60), UsedSeconds: used, LeftSeconds: left,
			MinutesLeft: (left + 59) / 60, Reached: k.use.Seconds >= lim}
		if r.DailyLimit.Reached && active == nil {
			active = k.limitRefusal(m)
		}
	}
	if active != nil {
		r.Active, r.Message = &active.Reason, &active.Msg
		if !active.Until.IsZero() {
			r.Until = &active.Until
		}
	}
	if t := k.sleep; t != nil {
		s := &SleepState{Until: t.until}
		if t.until == "" {
			s.Until = "time"
			mins := t.minutes
			left := max(0, t.deadline-m.up)
			secs := int(left.Round(time.Second) / time.Second)
			ends := m.now.Add(left).In(m.loc).Round(time.Second)
			s.Minutes, s.LeftSeconds, s.EndsAt = &mins, &secs, &ends
		}
		r.SleepTimer = s
	}
	return r
}

// changeKey is what OnChange compares: the restrictions without their
// running counters, so a change is reported once, not every second. The
// caller holds mu.
func (k *Keeper) changeKey(r Restrictions) string {
	s := fmt.Sprintf("%s|%s|%d|%d", str(r.Active), r.Clock, r.LockedFolders, k.sleepSeq)
	if r.Bedtime != nil {
		s += "|" + r.Bedtime.Until.String()
	}
	if r.DailyLimit != nil {
		s += fmt.Sprintf("|%d|%v", r.DailyLimit.Minutes, r.DailyLimit.Reached)
	}
	return s
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
