package rules

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

func nightRules() Rules {
	return Rules{
		Bedtime:       Bedtime{Windows: schoolNights().Windows, Folders: []string{"lull"}, NightMaxVolume: 30},
		LockedFolders: []string{"secret"},
	}
}

var library = map[string][]float64{
	"story":  {600, 600},
	"lull":   {600},
	"secret": {600},
	"long":   {7200},
}

func folder(id string) player.Command { return player.Command{Action: player.ActFolder, FolderID: id} }

var (
	play  = player.Command{Action: player.ActPlay}
	pause = player.Command{Action: player.ActPause}
)

// Inside bedtime every way to start ordinary music is refused the same
// way, with the reason and until when; bedtime content plays, under the
// night maximum; stopping and the volume are never refused; a locked
// folder is a parent's to start.
func TestAdmitInsideBedtime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		b := newBox(t, nightRules(), at(loc, 3, 23, 20, 0), library)
		r := b.refused(network, folder("story"), ReasonBedtime, "bedtime until 07:00")
		if !r.Until.Equal(at(loc, 3, 24, 7, 0)) || !errors.Is(r, fault.Forbidden) {
			t.Errorf("until %v, forbidden %v", r.Until, errors.Is(r, fault.Forbidden))
		}
		b.refused(touch, folder("story"), ReasonBedtime, "bedtime until 07:00")
		b.refused(touch, player.Command{Action: player.ActResume, FolderID: "story", ItemIndex: index(1)}, ReasonBedtime, "")

		st := b.do(touch, folder("lull"))
		if st.State != player.Playing || st.MaxVolume != 30 || st.Volume != 30 {
			t.Errorf("bedtime content: %+v", st)
		}
		if st := b.do(network, player.Command{Action: player.ActVolume, Value: num(90)}); st.Volume != 30 {
			t.Errorf("volume above the night maximum: %d", st.Volume)
		}
		b.do(touch, pause)
		b.do(touch, play) // bedtime content may start again
		b.do(touch, player.Command{Action: player.ActStop})

		b.refused(touch, folder("secret"), ReasonLocked, "folder is locked")
		b.refused(network, folder("secret"), ReasonLocked, "folder is locked")
		if len(b.over) != 0 {
			t.Fatal("override reported for a refusal")
		}
		b.do(admin, folder("story"))
		b.do(touch, pause)
		b.refused(touch, play, ReasonBedtime, "") // the parent's start is not the child's
		b.do(touch, player.Command{Action: player.ActNext})
		b.do(touch, player.Command{Action: player.ActSleepTimer, Value: num(30)})
		b.mu.Lock()
		over := b.over
		b.mu.Unlock()
		if len(over) != 1 || over[0].Reason != ReasonBedtime || over[0].FolderID != "story" || !over[0].Caller.Admin {
			t.Errorf("overrides: %+v", over)
		}
		res := b.k.Restrictions()
		if res.Active == nil || *res.Active != ReasonBedtime || res.Bedtime == nil || *res.Bedtime.NightMaxVolume != 30 ||
			res.Clock != ClockSet || res.LockedFolders != 1 || res.SleepTimer == nil || *res.SleepTimer.LeftSeconds != 1800 {
			t.Errorf("restrictions: %+v", res)
		}
	})
}

func TestSleepTimerCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBox(t, Rules{}, at(berlin(t), 3, 23, 10, 0), library)
		for _, v := range []float64{4, 121, 7.5, -5} {
			_, err := b.p.Do(touch, player.Command{Action: player.ActSleepTimer, Value: num(v)})
			if !errors.Is(err, fault.Invalid) {
				t.Errorf("sleep_timer %v: %v", v, err)
			}
		}
		b.do(touch, player.Command{Action: player.ActSleepTimer, Value: num(5)})
		if s := b.k.Restrictions().SleepTimer; s == nil || s.Until != "time" || *s.Minutes != 5 {
			t.Errorf("after 5: %+v", s)
		}
		b.do(network, player.Command{Action: player.ActSleepTimer, Until: player.UntilTrack})
		if s := b.k.Restrictions().SleepTimer; s == nil || s.Until != "track" || s.EndsAt != nil {
			t.Errorf("after track: %+v", s)
		}
		b.do(network, player.Command{Action: player.ActSleepTimer, Value: num(0)})
		if s := b.k.Restrictions().SleepTimer; s != nil {
			t.Errorf("after 0: %+v", s)
		}
	})
}

// The limit: listening counts while music plays; shortly before it runs
// out the volume steps down to silence, the player pauses exactly when it
// ran out, the volume returns, the box says so once, and starting is
// refused until local midnight.
func TestDailyLimitFadesAndHoldsUntilMidnight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		r := Rules{DailyLimitMinutes: map[string]int{"mon": 1, "tue": 1}}
		b := newBox(t, r, at(loc, 3, 23, 10, 0), library)
		b.do(touch, folder("story"))
		time.Sleep(50 * time.Second)
		if st := b.p.Status(); st.State != player.Playing || st.Volume != 50 {
			t.Fatalf("after 50 s: %+v", st)
		}
		if l := b.k.Restrictions().DailyLimit; l == nil || l.LeftSeconds != 10 || l.MinutesLeft != 1 || l.Reached {
			t.Errorf("after 50 s: %+v", l)
		}
		time.Sleep(9 * time.Second)
		if st := b.p.Status(); st.State != player.Playing || st.Volume >= 50 || st.Volume == 0 {
			t.Fatalf("after 59 s the fade is under way: %+v", st)
		}
		time.Sleep(2 * time.Second)
		st := b.p.Status()
		if st.State != player.Paused || st.Volume != 50 {
			t.Fatalf("after 61 s: %+v", st)
		}
		vols := b.p.volumes()
		checkRamp(t, vols, 50)
		if b.said != 1 {
			t.Errorf("said %d times", b.said)
		}
		r2 := b.refused(touch, play, ReasonDailyLimit, "daily limit reached")
		if !r2.Until.Equal(at(loc, 3, 24, 0, 0)) {
			t.Errorf("until %v", r2.Until)
		}
		b.refused(network, folder("lull"), ReasonDailyLimit, "")
		if s := b.lastSave(); s.u != state.Urgent || s.l.Seconds < 60 || !s.l.Announced || s.l.Day != "2026-03-23" {
			t.Errorf("saved at the limit: %+v", s)
		}
		// An administrator may go on; the rules do not end that.
		b.do(admin, play)
		time.Sleep(30 * time.Second)
		if st := b.p.Status(); st.State != player.Playing {
			t.Errorf("the parent's override was ended: %+v", st)
		}
		b.do(touch, pause)
		if b.said != 1 {
			t.Errorf("said %d times", b.said)
		}
		// Local midnight: a new day, a new minute.
		time.Sleep(14 * time.Hour)
		b.do(touch, play)
		time.Sleep(2 * time.Second)
		b.do(touch, pause)
		synctest.Wait()
		if l := b.k.Restrictions().DailyLimit; l == nil || l.Reached || l.UsedSeconds != 2 {
			t.Errorf("after midnight: %+v", l)
		}
		if s := b.lastSave(); s.l.Day != "2026-03-24" || s.l.Announced {
			t.Errorf("new day saved as %+v", s)
		}
	})
}

// Announcements do not count as listening; an end that falls due while one
// holds the music (the sleep timer here) keeps the music from coming back.
func TestAnnouncementsAndRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := Rules{DailyLimitMinutes: map[string]int{"mon": 10}}
		b := newBox(t, r, at(berlin(t), 3, 23, 10, 0), library)
		b.do(touch, folder("long"))
		b.do(touch, player.Command{Action: player.ActSleepTimer, Value: num(5)})
		time.Sleep(4*time.Minute + 40*time.Second)
		b.p.speak(true)
		time.Sleep(40 * time.Second) // past the timer's end
		if l := b.k.Restrictions().DailyLimit; l.UsedSeconds != 280 {
			t.Errorf("the announcement counted: %+v", l)
		}
		b.p.speak(false)
		synctest.Wait()
		st := b.p.Status()
		if st.State != player.Paused || st.Volume != 50 || b.p.resumed != 0 {
			t.Fatalf("after the announcement: %+v, the music came back %d times", st, b.p.resumed)
		}
		if s := b.k.Restrictions().SleepTimer; s != nil {
			t.Errorf("timer still set: %+v", s)
		}
	})
}

// checkRamp: the fade's volumes go down step by step, never up, to below a
// fifth of where they began.
func checkRamp(t *testing.T, vols []int, from int) {
	t.Helper()
	if len(vols) < 5 {
		t.Fatalf("fade in %d steps: %v", len(vols), vols)
	}
	last := len(vols) - 1 // the return to the volume after the pause
	if vols[last] != from {
		t.Errorf("volume after the fade %d, want %d back", vols[last], from)
	}
	prev := from
	for _, v := range vols[:last] {
		if v > prev {
			t.Fatalf("the fade went up: %v", vols)
		}
		prev = v
	}
	if prev > from/5 {
		t.Errorf("the fade ended at %d of %d: %v", prev, from, vols)
	}
}

// Music that began before bedtime plays under the night maximum from the
// start of the window and ends with the track that plays then; nothing
// ordinary starts again.
func TestBedtimeEndsMusicWithTheTrack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		b := newBox(t, nightRules(), at(loc, 3, 23, 19, 25), library)
		b.do(touch, player.Command{Action: player.ActVolume, Value: num(60)})
		b.do(touch, folder("story")) // two tracks of 10 minutes
		time.Sleep(6 * time.Minute)  // 19:31
		st := b.p.Status()
		if st.State != player.Playing || st.Volume != 30 || st.Index != 0 {
			t.Fatalf("at 19:31: %+v", st)
		}
		time.Sleep(4*time.Minute - 3*time.Second) // 19:34:57, 3 s before the track ends
		if st := b.p.Status(); st.State != player.Playing || st.Volume >= 30 {
			t.Fatalf("the fade at the track's end is not under way: %+v", st)
		}
		time.Sleep(4 * time.Second)
		st = b.p.Status()
		if st.State != player.Paused || st.Volume != 30 || st.Index > 1 || st.Index == 1 && st.Position > 0.5 {
			t.Fatalf("after the track: %+v", st)
		}
		checkRamp(t, b.p.volumes(), 30)
		b.refused(touch, play, ReasonBedtime, "bedtime until 07:00")
	})
}

func TestBedtimeGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		r := nightRules()
		r.Bedtime.GraceMinutes = 10
		b := newBox(t, r, at(loc, 3, 23, 19, 0), library)
		b.do(touch, folder("long"))
		time.Sleep(39*time.Minute + 50*time.Second) // 19:39:50
		if st := b.p.Status(); st.State != player.Playing {
			t.Fatalf("ended before the grace time: %+v", st)
		}
		time.Sleep(11 * time.Second)
		if st := b.p.Status(); st.State != player.Paused {
			t.Fatalf("plays on after the grace time: %+v", st)
		}
	})
}

// What started inside bedtime passed the gate: bedtime content and a
// parent's override play on, and bedtime content does not count.
func TestBedtimeSparesWhatItAdmitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		r := nightRules()
		r.DailyLimitMinutes = map[string]int{"mon": 1}
		b := newBox(t, r, at(loc, 3, 23, 20, 0), library)
		b.do(touch, folder("lull"))
		time.Sleep(5 * time.Minute)
		if st := b.p.Status(); st.State != player.Playing {
			t.Fatalf("bedtime content ended: %+v", st)
		}
		if l := b.k.Restrictions().DailyLimit; l.UsedSeconds != 0 {
			t.Errorf("bedtime content counted: %+v", l)
		}
		if err := b.k.SetRules(nightRules()); err != nil {
			t.Fatal(err)
		}
		b.do(admin, folder("long"))
		time.Sleep(5 * time.Minute)
		if st := b.p.Status(); st.State != player.Playing {
			t.Fatalf("the parent's music ended: %+v", st)
		}
	})
}

func TestSleepTimerFadesOverItsLastHalfMinute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBox(t, Rules{}, at(berlin(t), 3, 23, 18, 0), library)
		b.do(touch, folder("long"))
		b.do(touch, player.Command{Action: player.ActSleepTimer, Value: num(5)})
		time.Sleep(4*time.Minute + 29*time.Second)
		if st := b.p.Status(); st.Volume != 50 {
			t.Fatalf("faded before the last 30 s: %+v", st)
		}
		time.Sleep(16 * time.Second)
		if st := b.p.Status(); st.State != player.Playing || st.Volume > 30 || st.Volume < 20 {
			t.Fatalf("half-way through the fade: %+v", st)
		}
		time.Sleep(16 * time.Second)
		if st := b.p.Status(); st.State != player.Paused || st.Volume != 50 {
			t.Fatalf("after the timer: %+v", st)
		}
		checkRamp(t, b.p.volumes(), 50)
		if s := b.k.Restrictions().SleepTimer; s != nil {
			t.Errorf("timer still set: %+v", s)
		}
		b.do(touch, play) // a sleep timer is no lock
		b.mu.Lock()
		defer b.mu.Unlock()
		set, cleared := false, false
		for _, c := range b.changes {
			if c.SleepTimer != nil {
				set = true
			} else if set {
				cleared = true
			}
		}
		if !set || !cleared || len(b.changes) > 4 {
			t.Errorf("changes reported: %d, set %v, cleared %v", len(b.changes), set, cleared)
		}
	})
}

func TestSleepTimerUntilTrackAndFolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBox(t, Rules{}, at(berlin(t), 3, 23, 18, 0), library)
		b.do(touch, folder("story"))
		time.Sleep(2 * time.Minute)
		b.do(touch, player.Command{Action: player.ActSleepTimer, Until: player.UntilTrack})
		time.Sleep(8*time.Minute - 31*time.Second)
		if st := b.p.Status(); st.Volume != 50 || st.State != player.Playing {
			t.Fatalf("before the last 30 s of the track: %+v", st)
		}
		time.Sleep(32 * time.Second)
		if st := b.p.Status(); st.State != player.Paused || st.Index > 1 || st.Index == 1 && st.Position > 0.5 {
			t.Fatalf("after the track: %+v", st)
		}
		checkRamp(t, b.p.volumes(), 50)

		b.do(touch, folder("story"))
		b.do(touch, player.Command{Action: player.ActSleepTimer, Until: player.UntilFolder})
		time.Sleep(11 * time.Minute)
		if st := b.p.Status(); st.State != player.Playing || st.Index != 1 || st.Volume != 50 {
			t.Fatalf("folder: in the last track: %+v", st)
		}
		time.Sleep(10 * time.Minute)
		if st := b.p.Status(); st.State == player.Playing || st.Volume != 50 {
			t.Fatalf("folder: after the last track: %+v", st)
		}
		if s := b.k.Restrictions().SleepTimer; s != nil {
			t.Errorf("timer still set: %+v", s)
		}
	})
}

// The counter reaches the saver while music plays (at least every 10 s of
// listening) and at once on pause; a restart goes on from the saved count
// on the same day and from zero on another.
func TestCounterSavedAndRestored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		r := Rules{DailyLimitMinutes: map[string]int{"mon": 2}}
		b := newBox(t, r, at(loc, 3, 23, 10, 0), library)
		b.do(touch, folder("long"))
		time.Sleep(35 * time.Second)
		b.mu.Lock()
		routine := 0
		for _, s := range b.saves {
			if s.u == state.Routine {
				routine++
			}
		}
		b.mu.Unlock()
		if routine < 3 {
			t.Errorf("%d routine saves in 35 s of listening", routine)
		}
		b.do(touch, pause)
		synctest.Wait()
		s := b.lastSave()
		if s.u != state.Urgent || s.l.Seconds < 34 || s.l.Seconds > 36 || s.l.LastSeen.IsZero() {
			t.Fatalf("saved on pause: %+v", s)
		}
		b.stop()

		// The same day: 85 s are left.
		b2 := newBox(t, r, at(loc, 3, 23, 11, 0), library, func(c *Config) { c.Listening = s.l })
		if l := b2.k.Restrictions().DailyLimit; l.LeftSeconds > 86 || l.LeftSeconds < 84 {
			t.Errorf("restored: %+v", l)
		}
		b2.do(touch, folder("long"))
		time.Sleep(86 * time.Second)
		if st := b2.p.Status(); st.State != player.Paused {
			t.Errorf("the restored counter did not run out: %+v", st)
		}
		b2.stop()

		// The next day starts from zero.
		b3 := newBox(t, r, at(loc, 3, 24, 9, 0), library, func(c *Config) { c.Listening = s.l })
		if l := b3.k.Restrictions().DailyLimit; l != nil {
			t.Errorf("Tuesday has no limit, got %+v", l)
		}
		if got := b3.k.Listening(); got.Seconds != 0 || got.Day != "2026-03-24" {
			t.Errorf("Tuesday's counter: %+v", got)
		}
	})
}

// Before the network time is set the clock reads 1970: the rules go by the
// last time saved plus the time since the start, and say so.
func TestClockNotSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		seen := at(loc, 3, 23, 20, 0)
		boot := time.Date(1970, 1, 1, 0, 0, 5, 0, time.UTC)
		b := newBox(t, nightRules(), boot, library, func(c *Config) {
			c.Zone = func() *time.Location { return loc }
			c.Listening = state.Listening{Day: "2026-03-23", LastSeen: seen}
		})
		r := b.k.Restrictions()
		if r.Clock != ClockEstimated || r.Active == nil || *r.Active != ReasonBedtime {
			t.Fatalf("estimated: %+v", r)
		}
		b.refused(touch, folder("story"), ReasonBedtime, "bedtime until 07:00")
		b.clock.Set(at(loc, 3, 24, 8, 0)) // the network time arrives
		if r := b.k.Restrictions(); r.Clock != ClockSet || r.Active != nil {
			t.Fatalf("set: %+v", r)
		}
		b.do(touch, folder("story"))

		b2 := newBox(t, nightRules(), boot, library, func(c *Config) { c.Zone = func() *time.Location { return loc } })
		if r := b2.k.Restrictions(); r.Clock != ClockUnknown || r.Active != nil {
			t.Fatalf("unknown: %+v", r)
		}
		b2.do(touch, folder("story"))
	})
}

// A parent's change applies at once: a night that begins now lets the
// music end as a night beginning would; a cancelled rule stops its fade
// and gives the volume back.
func TestSetRulesAppliesLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		b := newBox(t, Rules{}, at(loc, 3, 23, 21, 0), library)
		b.do(touch, folder("long"))
		time.Sleep(time.Minute)
		r := Rules{DailyLimitMinutes: map[string]int{"mon": 1}}
		if err := b.k.SetRules(r); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the minute is over: fade
		if st := b.p.Status(); st.State != player.Playing || st.Volume >= 50 {
			t.Fatalf("the new limit does not fade: %+v", st)
		}
		if err := b.k.SetRules(Rules{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if st := b.p.Status(); st.State != player.Playing || st.Volume != 50 {
			t.Fatalf("the limit was lifted, the fade goes on: %+v", st)
		}
		if err := b.k.SetRules(nightRules()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if st := b.p.Status(); st.Volume != 30 || st.MaxVolume != 30 {
			t.Fatalf("the night maximum does not apply at once: %+v", st)
		}
		if err := b.k.SetRules(Rules{LockedFolders: []string{""}}); !errors.Is(err, fault.Invalid) {
			t.Errorf("invalid rules: %v", err)
		}
	})
}

// A box that only stands there writes nothing at start, and then only the
// time, every quarter of an hour, for a start without network time.
func TestIdleSavesOnlyTheTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		b := newBox(t, Rules{DailyLimitMinutes: map[string]int{"mon": 10}}, at(loc, 3, 23, 10, 0), library)
		time.Sleep(14 * time.Minute)
		b.mu.Lock()
		n := len(b.saves)
		b.mu.Unlock()
		if n != 0 {
			t.Fatalf("%d saves in 14 idle minutes", n)
		}
		time.Sleep(2 * time.Minute)
		s := b.lastSave()
		if s.u != state.Routine || s.l.Seconds != 0 || !s.l.LastSeen.Equal(at(loc, 3, 23, 10, 15)) {
			t.Errorf("saved %+v", s)
		}
	})
}
