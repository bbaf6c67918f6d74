package rules

import (
	"context"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Player is what Run needs of the player: its snapshots and its public
// command path, the same one every other input uses.
type Player interface {
	Status() player.Status
	Changed() <-chan struct{}
	Do(ctx context.Context, cmd player.Command) (player.Status, error)
}

// fade is an ending under way: the volume steps down to silence by end,
// then the player pauses and the volume returns to where it was, so the
// next start (tomorrow, after the nap) is not silent. A fade is sound, so
// it runs on the process's own monotonic time; the rules' clock only says
// when it must begin and how long it may take.
type fade struct {
	reason     string
	restore    int // the volume before the fade
	from       int // the volume the current ramp began at
	start, end time.Time
}

// ending is a rule that wants the music over by at (uptime).
type ending struct {
	reason string
	at     time.Duration
	fade   time.Duration
}

// length is how long a fade that begins at up takes: until the rule wants
// silence, but never less than half the fade, so that an end already due
// (a limit set below what was heard today, a timer that expired during an
// announcement) still fades rather than cuts.
func (e *ending) length(up time.Duration) time.Duration {
	return max(e.at-up, e.fade/2)
}

// look is what one observation found; Run acts on it without the lock.
type look struct {
	st      player.Status
	up      time.Duration
	cap     int
	end     *ending
	save    *state.Listening
	urgency state.Urgency
	changed *Restrictions
}

// retargetSlack: a track's end is known to about a second (the status
// tells the position by the second), so a fade keeps its end unless a rule
// wants silence clearly sooner.
const retargetSlack = 500 * time.Millisecond

// Run enforces the rules over time until ctx ends: it counts listening
// time, applies the night maximum when bedtime begins, and ends playback
// when the limit runs out, bedtime begins over music that started before
// it, or the sleep timer expires, fading out first. It acts through p.Do
// as the box itself (auth.Internal), so its commands pass the gate like
// any other. It looks every Tick, at every change of the player and
// whenever the rules or the timer change.
func (k *Keeper) Run(ctx context.Context, p Player) error {
	actx := auth.WithCaller(ctx, auth.Caller{Via: auth.Internal})
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		changed := p.Changed()
		l := k.observe(p.Status())
		k.act(actx, p, l)
		wait := k.cfg.Tick
		if k.fade != nil {
			wait /= 10
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			k.cfg.Save(k.Listening(), state.Urgent)
			return nil
		case <-changed:
		case <-k.poke:
		case <-t.C:
		}
	}
}

// observe counts the listening since the last look and decides what is
// due.
func (k *Keeper) observe(st player.Status) look {
	k.mu.Lock()
	defer k.mu.Unlock()
	m := k.at()
	l := look{st: st, up: m.up}
	playing := st.State == player.Playing
	was := k.counting
	k.counting = playing && !k.exempt(m, folderOf(st))
	k.expireSleep(m, st)
	if playing || st.Speaking { // speaking: the music may be held for the announcement
		l.end = k.ending(m, st)
	}
	if m.in {
		l.cap = k.rules.Bedtime.NightMaxVolume
	}

	save := true
	switch {
	case was && !k.counting:
		l.urgency = state.Urgent
	case k.counting && k.use.Seconds-k.savedSecs >= 10:
		l.urgency = state.Routine
	case m.clock == ClockSet && m.up-k.savedUp >= 15*time.Minute:
		l.urgency = state.Routine // the time, for a start without network time
	default:
		save = false
	}
	if save {
		if m.clock != ClockUnknown {
			k.use.LastSeen = m.now
		}
		k.savedSecs, k.savedUp = k.use.Seconds, m.up
		u := k.use
		l.save = &u
	}

	r := k.restrictions(m)
	if key := k.changeKey(r); key != k.lastKey {
		k.lastKey = key
		l.changed = &r
	}
	return l
}

func folderOf(st player.Status) string {
	if st.FolderID == nil {
		return ""
	}
	return *st.FolderID
}

// expireSleep forgets a timer that has nothing left to end.
func (k *Keeper) expireSleep(m moment, st player.Status) {
	t := k.sleep
	if t == nil {
		return
	}
	playing := st.State == player.Playing || st.Speaking
	switch {
	case t.until == "" && m.up >= t.deadline && !playing,
		t.until == player.UntilFolder && st.State == player.Stopped && t.track.set:
		k.sleep = nil
		k.sleepSeq++
	case t.until == player.UntilFolder && playing:
		t.track.set = true // the folder has played: its end ends the timer
	}
}

// ending is the earliest end a rule wants for the music playing now, or
// nil.
func (k *Keeper) ending(m moment, st player.Status) *ending {
	folder := folderOf(st)
	exempt := k.exempt(m, folder)
	s := k.session
	mine := s.folder == folder
	var best *ending
	consider := func(reason string, at, fade time.Duration) {
		if best == nil || at < best.at {
			best = &ending{reason: reason, at: at, fade: fade}
		}
	}
	if lim, ok := k.limit(m); ok && !exempt && !(mine && s.overrode[ReasonDailyLimit]) {
		left := time.Duration((lim - k.use.Seconds) * float64(time.Second))
		consider(ReasonDailyLimit, m.up+max(left, 0), k.cfg.Fade)
	}
	// Bedtime ends music that the gate did not admit in this night; what
	// it admitted passed as bedtime content or an administrator's start.
	if m.in && !exempt && !(mine && s.overrode[ReasonBedtime]) && (!mine || !s.night.Equal(m.night.start)) {
		if g := k.rules.Bedtime.GraceMinutes; g > 0 {
			at := m.night.start.Add(time.Duration(g) * time.Minute).Sub(m.now)
			consider(ReasonBedtime, m.up+max(at, 0), k.cfg.Fade)
		} else {
			consider(ReasonBedtime, trackEnd(&k.bed, st, m.up), k.cfg.Fade)
		}
	}
	if t := k.sleep; t != nil {
		switch t.until {
		case "":
			consider(reasonSleep, t.deadline, k.cfg.SleepFade)
		case player.UntilTrack:
			consider(reasonSleep, trackEnd(&t.track, st, m.up), k.cfg.SleepFade)
		case player.UntilFolder:
			if st.Final { // the last of the play order: shuffled, not the folder's last
				consider(reasonSleep, m.up+remaining(st), k.cfg.SleepFade)
			}
		}
	}
	return best
}

const reasonSleep = "sleep_timer"

// trackEnd is when the track mark names ends: the current track the first
// time, and now once another track plays.
func trackEnd(mark *trackMark, st player.Status, up time.Duration) time.Duration {
	folder := folderOf(st)
	if !mark.set {
		*mark = trackMark{set: true, folder: folder, index: st.Index}
	}
	if mark.folder != folder || mark.index != st.Index {
		return up
	}
	return up + remaining(st)
}

// remaining is what is left of the current track; a track of unknown
// length never ends by itself.
func remaining(st player.Status) time.Duration {
	if st.Duration <= 0 {
		return 1 << 62
	}
	return time.Duration(max(st.Duration-st.Position, 0) * float64(time.Second))
}

// act does what observe found due.
func (k *Keeper) act(ctx context.Context, p Player, l look) {
	if l.save != nil {
		k.cfg.Save(*l.save, l.urgency)
	}
	if l.changed != nil {
		k.cfg.OnChange(*l.changed)
	}
	if l.cap != k.appliedCap {
		// Any command applies the gate's cap; this one changes nothing
		// else, so the night maximum is heard as bedtime begins.
		zero := 0.0
		if _, err := p.Do(ctx, player.Command{Action: player.ActVolumeDelta, Value: &zero}); err == nil {
			k.appliedCap = l.cap
		}
	}
	k.step(ctx, p, l)
}

// step moves a fade on: starts it when an ending is near, lowers the
// volume along a straight line to silence at the end, pauses there.
func (k *Keeper) step(ctx context.Context, p Player, l look) {
	st := l.st
	if st.Speaking {
		// An announcement holds the music (or the music is paused). An end
		// due meanwhile pauses it now, silently, so it does not come back
		// after the announcement; a fade under way waits for it.
		if l.end != nil && l.end.at <= l.up {
			_, _ = p.Do(ctx, player.Command{Action: player.ActPause})
			if k.fade != nil {
				k.finish(ctx, p, true)
			} else {
				k.ended(l.end.reason)
			}
		}
		return
	}
	now := time.Now()
	f := k.fade
	if f == nil {
		if st.State != player.Playing || l.end == nil || l.end.at-l.up > l.end.fade {
			return
		}
		f = &fade{reason: l.end.reason, restore: st.Volume, from: st.Volume, start: now, end: now.Add(l.end.length(l.up))}
		k.fade = f
	}
	switch {
	case st.State != player.Playing, l.end == nil, l.end.at-l.up > l.end.fade:
		// Paused or ended by someone, or the rule went away (a parent
		// changed it, the timer was cancelled): back to the volume.
		k.finish(ctx, p, false)
		return
	case now.Add(l.end.length(l.up)).Before(f.end.Add(-retargetSlack)):
		f.reason, f.from, f.start, f.end = l.end.reason, st.Volume, now, now.Add(l.end.length(l.up))
	}
	if !now.Before(f.end) {
		_, _ = p.Do(ctx, player.Command{Action: player.ActPause})
		k.finish(ctx, p, true)
		return
	}
	target := int(float64(f.from) * float64(f.end.Sub(now)) / float64(f.end.Sub(f.start)))
	if target < st.Volume {
		v := float64(target)
		_, _ = p.Do(ctx, player.Command{Action: player.ActVolume, Value: &v})
	}
}

// finish ends a fade: when the music was ended (done), the rule that ended
// it has its say; then the volume returns. In that order, whoever sees the
// volume back after a pause also sees the rule that paused it.
func (k *Keeper) finish(ctx context.Context, p Player, done bool) {
	f := k.fade
	k.fade = nil
	if done {
		k.ended(f.reason)
	}
	if st := p.Status(); st.Volume < f.restore {
		v := float64(f.restore)
		_, _ = p.Do(ctx, player.Command{Action: player.ActVolume, Value: &v})
	}
}

// ended: a rule has ended the music. The limit counts as used up and is
// announced, once a day; a sleep timer is over.
func (k *Keeper) ended(reason string) {
	k.mu.Lock()
	m := k.at()
	say := false
	switch reason {
	case ReasonDailyLimit:
		if lim, ok := k.limit(m); ok {
			// Heard to the end: the counter may lag the fade by a look.
			k.use.Seconds = max(k.use.Seconds, lim)
		}
		say = !k.use.Announced
		k.use.Announced = true
	case reasonSleep:
		k.sleep = nil
		k.sleepSeq++
	}
	use := k.use
	refusal := k.limitRefusal(m)
	k.mu.Unlock()
	if reason == ReasonDailyLimit {
		k.cfg.Save(use, state.Urgent)
	}
	if say {
		k.cfg.OnLimitReached(refusal)
	}
	k.wake()
}
