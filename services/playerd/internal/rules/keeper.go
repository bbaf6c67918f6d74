package rules

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Config is what a Keeper needs from its owner.
type Config struct {
	Rules Rules
	// Listening is the counter the previous run saved.
	Listening state.Listening
	Clock     Clock // nil: SystemClock()
	Zone      Zone  // nil: LocalZone
	// Save receives the counter whenever it must reach the disk: Urgent
	// on pause, a new day and the limit running out, Routine while
	// playing (at least every 10 s of listening). It must not block.
	Save func(state.Listening, state.Urgency)
	// OnChange hears the restrictions whenever one of them began, ended
	// or changed (not for each second of the counters). It must not block.
	OnChange func(Restrictions)
	// OnRules hears that SetRules put new rules in force. It must not
	// block.
	OnRules func()
	// OnLimitReached: the daily limit has just ended playback; called once
	// a day, to say so, with the refusal a start now gets.
	OnLimitReached func(*Refusal)
	// OnOverride: an administrator session started what a rule refuses
	// everyone else; for the log. It must not block.
	OnOverride func(Override)
	// Tick is how often Run looks at the clock when nothing else wakes it
	// (default 1 s); while fading, ten times as often.
	Tick time.Duration
	// Fade is the fade-out when the limit runs out or bedtime ends music
	// (default 5 s); SleepFade the sleep timer's (default 30 s).
	Fade, SleepFade time.Duration
}

// Override is a start a rule refused to everyone but an administrator.
type Override struct {
	Caller   auth.Caller
	Action   string
	FolderID string
	Reason   string // the rule overridden
}

// The sleep timer's range in minutes.
const (
	SleepMin = 5
	SleepMax = 120
)

// Keeper holds the rules and their counters; it is the player's Gate
// (Admit) and ends playback when a rule says so (Run).
type Keeper struct {
	cfg  Config
	poke chan struct{}

	mu        sync.Mutex
	rules     Rules
	est       estimator
	use       state.Listening
	counting  bool          // music that counts was playing at the last look
	lastUp    time.Duration // uptime at the last look
	savedSecs float64       // use.Seconds at the last save
	savedUp   time.Duration // uptime at the last save
	dayEnd    time.Duration // uptime when use.Day ends, as the wall clock last said
	dayKnown  bool          // dayEnd is set
	sleep     *sleepTimer
	sleepSeq  int // counts changes of sleep, for OnChange
	session   session
	bed       trackMark // the track bedtime lets end, for music older than the night

	// Run's own.
	fade       *fade
	appliedCap int
	lastKey    string
}

// session is the playback the last admitted start began.
type session struct {
	folder string
	// night is the start of the bedtime the gate admitted it in (bedtime
	// content, or an administrator's start), zero outside bedtime. Not a
	// time of the start: a start stamped with the wall clock would, after
	// a step, seem to come before or after a night it did not.
	night time.Time
	// Rules an administrator overrode for it: they do not end it.
	overrode map[string]bool
}

// sleepTimer is set by the sleep_timer command.
type sleepTimer struct {
	until    string        // "" for minutes, player.UntilTrack or player.UntilFolder
	minutes  int           // as set
	deadline time.Duration // uptime, for minutes
	track    trackMark
}

// trackMark remembers a track seen playing, to tell when it is over.
type trackMark struct {
	set    bool
	folder string
	index  int
}

// NewKeeper prepares the rules; Run enforces them over time.
func NewKeeper(cfg Config) *Keeper {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock()
	}
	if cfg.Zone == nil {
		cfg.Zone = LocalZone
	}
	if cfg.Save == nil {
		cfg.Save = func(state.Listening, state.Urgency) {}
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func(Restrictions) {}
	}
	if cfg.OnRules == nil {
		cfg.OnRules = func() {}
	}
	if cfg.OnLimitReached == nil {
		cfg.OnLimitReached = func(*Refusal) {}
	}
	if cfg.OnOverride == nil {
		cfg.OnOverride = func(Override) {}
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.Fade <= 0 {
		cfg.Fade = 5 * time.Second
	}
	if cfg.SleepFade <= 0 {
		cfg.SleepFade = 30 * time.Second
	}
	k := &Keeper{
		cfg:        cfg,
		poke:       make(chan struct{}, 1),
		rules:      cfg.Rules.Clone(),
		use:        cfg.Listening,
		appliedCap: -1,
	}
	k.est = estimator{clock: cfg.Clock, base: cfg.Listening.LastSeen, baseUptime: cfg.Clock.Uptime()}
	k.lastUp = cfg.Clock.Uptime()
	k.savedSecs, k.savedUp = k.use.Seconds, k.lastUp
	// OnChange reports changes: what holds at the start is no news (the
	// status carries it).
	k.lastKey = k.changeKey(k.restrictions(k.at()))
	return k
}

// Rules returns the rules in force.
func (k *Keeper) Rules() Rules {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.rules.Clone()
}

// SetRules puts new rules in force at once; r must be valid (Validate).
// Music that plays on is judged by them within a tick: a night that now
// began lets it end as a night beginning would.
func (k *Keeper) SetRules(r Rules) error {
	if err := r.Validate(); err != nil {
		return err
	}
	k.mu.Lock()
	k.rules = r.Clone()
	k.bed = trackMark{}
	k.mu.Unlock()
	k.wake()
	k.cfg.OnRules()
	return nil
}

// Listening returns the counter as it is now, for the state file.
func (k *Keeper) Listening() state.Listening {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.use
}

func (k *Keeper) wake() {
	select {
	case k.poke <- struct{}{}:
	default:
	}
}

// moment is the time as the rules read it, once per decision.
type moment struct {
	now   time.Time
	clock string // ClockSet, ClockEstimated or ClockUnknown
	loc   *time.Location
	up    time.Duration
	night night
	in    bool // inside bedtime
}

// at reads the clock and brings the counter up to date; the caller holds
// mu. A new day starts a new count; there is nothing to save for that: a
// count on disk for another day is read as none.
func (k *Keeper) at() moment {
	m := moment{loc: k.cfg.Zone(), up: k.cfg.Clock.Uptime()}
	if m.loc == nil {
		m.loc = time.UTC
	}
	m.now, m.clock = k.est.now()
	if m.clock != ClockUnknown {
		m.night, m.in = k.rules.Bedtime.nightAt(m.now, m.loc)
	}
	k.turnDay(m)
	// Listening since the last look counts as it was then (a change of
	// the player wakes Run at once).
	dt := m.up - k.lastUp
	k.lastUp = m.up
	if k.counting && dt > 0 {
		if m.clock != ClockUnknown {
			dt = min(dt, m.now.Sub(startOfDay(m.now, m.loc))) // before midnight was yesterday's
		}
		k.use.Seconds += dt.Seconds()
	}
	return m
}

// turnDay starts a new count when the local day changed. The wall clock
// can step back across midnight (network time correcting a clock that ran
// ahead): that is no new day. The count stays on the later day until the
// wall clock reaches it again, or until that day is over by the uptime, so
// a clock set back by a year does not hold one count for a year. A step
// forward into another day is a new day. The caller holds mu.
func (k *Keeper) turnDay(m moment) {
	if day := k.day(m); day != k.use.Day {
		if day < k.use.Day && k.dayKnown && m.up < k.dayEnd {
			return
		}
		k.use = state.Listening{Day: day, LastSeen: k.use.LastSeen}
	}
	if m.clock != ClockUnknown {
		k.dayEnd, k.dayKnown = m.up+nextMidnight(m.now, m.loc).Sub(m.now), true
	}
}

// day is the local date the wall clock reads. Without any idea of the
// time it stays on the day counted for last.
func (k *Keeper) day(m moment) string {
	if m.clock == ClockUnknown {
		return k.use.Day
	}
	d, _ := dayOf(m.now, m.loc)
	return d
}

// limit is the limit in seconds of the day counted for (today, unless the
// clock stepped back across midnight), if there is one.
func (k *Keeper) limit(m moment) (float64, bool) {
	d, err := time.Parse(time.DateOnly, k.use.Day)
	if err != nil {
		return 0, false // never knew the day: nothing to judge by
	}
	mins, ok := k.rules.DailyLimitMinutes[dayKey(d.Weekday())]
	return float64(mins) * 60, ok
}

// exempt: bedtime content inside bedtime, which neither counts nor is
// refused.
func (k *Keeper) exempt(m moment, folder string) bool {
	return m.in && folder != "" && slices.Contains(k.rules.Bedtime.Folders, folder)
}

// Admit is the player's Gate. Pausing, stopping, seeking, skipping and the
// volume are always admitted, the volume under the night maximum inside
// bedtime. Starting music (play, toggle from pause, folder, resume) is
// refused for a locked folder, and, except for bedtime content inside
// bedtime, inside bedtime and once the daily limit is reached. An
// administrator session may start anyway; the override is reported.
// sleep_timer sets, extends (set again) or cancels (0) the sleep timer.
func (k *Keeper) Admit(ctx context.Context, a player.Ask) (player.Verdict, error) {
	caller := auth.CallerFrom(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	m := k.at()
	var v player.Verdict
	if m.in {
		v.MaxVolume = k.rules.Bedtime.NightMaxVolume
	}
	if a.Cmd.Action == player.ActSleepTimer {
		t, err := sleepFrom(a.Cmd, m.up)
		if err != nil {
			return player.Verdict{}, err
		}
		v.Commit = func() {
			k.mu.Lock()
			k.sleep = t
			k.sleepSeq++
			k.mu.Unlock()
			k.wake()
		}
		return v, nil
	}
	folder, starting := starts(a)
	if !starting || caller.Via == auth.Internal {
		return v, nil
	}
	refused := k.refusal(m, folder)
	if refused != nil && !caller.Admin {
		return player.Verdict{}, refused
	}
	v.Commit = func() {
		k.mu.Lock()
		k.session = session{folder: folder}
		if m.in {
			k.session.night = m.night.start
		}
		if refused != nil {
			k.session.overrode = map[string]bool{refused.Reason: true}
		}
		k.bed = trackMark{}
		if k.sleep != nil {
			k.sleep.track = trackMark{} // "end of track" means the track that plays now
		}
		k.mu.Unlock()
		if refused != nil {
			k.cfg.OnOverride(Override{Caller: caller, Action: a.Cmd.Action, FolderID: folder, Reason: refused.Reason})
		}
		k.wake()
	}
	return v, nil
}

// starts tells whether a command starts music, and which folder.
func starts(a player.Ask) (string, bool) {
	switch a.Cmd.Action {
	case player.ActFolder, player.ActResume:
		return a.Cmd.FolderID, true
	case player.ActPlay, player.ActToggle:
		return a.FolderID, !a.Playing && a.FolderID != ""
	}
	return "", false
}

// refusal is why starting folder is refused now, or nil.
func (k *Keeper) refusal(m moment, folder string) *Refusal {
	if slices.Contains(k.rules.LockedFolders, folder) {
		return &Refusal{Reason: ReasonLocked, Msg: "folder is locked"}
	}
	if k.exempt(m, folder) {
		return nil
	}
	if m.in {
		return bedtimeRefusal(m)
	}
	if lim, ok := k.limit(m); ok && k.use.Seconds >= lim {
		return k.limitRefusal(m)
	}
	return nil
}

func bedtimeRefusal(m moment) *Refusal {
	end := m.night.end.In(m.loc)
	return &Refusal{Reason: ReasonBedtime, Msg: "bedtime until " + end.Format("15:04"), Until: end}
}

// limitRefusal ends at the midnight that ends the day counted for.
func (k *Keeper) limitRefusal(m moment) *Refusal {
	r := &Refusal{Reason: ReasonDailyLimit, Msg: "daily limit reached"}
	if d, err := time.ParseInLocation(time.DateOnly, k.use.Day, m.loc); err == nil && m.clock != ClockUnknown {
		r.Until = nextMidnight(d, m.loc)
	}
	return r
}

// sleepFrom reads a sleep_timer command: nil cancels.
func sleepFrom(c player.Command, up time.Duration) (*sleepTimer, error) {
	if c.Until != "" {
		return &sleepTimer{until: c.Until}, nil
	}
	v := *c.Value
	if v == 0 {
		return nil, nil
	}
	if v != math.Trunc(v) || v < SleepMin || v > SleepMax {
		return nil, fault.New(fault.Invalid, "sleep_timer value must be whole minutes %d..%d, 0 to cancel, \"track\" or \"folder\", not %v", SleepMin, SleepMax, v)
	}
	return &sleepTimer{minutes: int(v), deadline: up + time.Duration(v)*time.Minute}, nil
}
