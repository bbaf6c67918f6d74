package rules

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Network time steps the wall clock of a box without a real-time clock,
// by hours or by a year, in either direction. These tests step it while
// the rules are at work: the windows and the day follow the wall clock
// (they are calendar rules), the counter and the sleep timer the uptime,
// and nothing fires twice or jumps.

const year = 365 * 24 * time.Hour

func used(t *testing.T, b *box) float64 {
	t.Helper()
	l := b.k.Restrictions().DailyLimit
	if l == nil {
		t.Fatal("no daily limit in force")
	}
	return float64(l.UsedSeconds)
}

// A step back across midnight is no new day: the count and the
// announcement stay on the later day until the wall clock reaches it
// again. A step forward within the day counts only the time that passed.
func TestDailyCounterAcrossClockSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		r := Rules{DailyLimitMinutes: map[string]int{"mon": 60, "tue": 20}}
		b := newBox(t, r, at(loc, 3, 24, 0, 5), library) // Tuesday, 00:05
		b.do(touch, folder("long"))
		time.Sleep(10 * time.Minute)
		if u := used(t, b); u < 599 || u > 601 {
			t.Fatalf("after 10 minutes: %v s", u)
		}
		b.clock.Step(-time.Hour) // Monday 23:15 on the wall
		time.Sleep(time.Minute)
		l := b.k.Restrictions().DailyLimit
		if u := float64(l.UsedSeconds); u < 659 || u > 661 || l.Minutes != 20 || b.k.Listening().Day != "2026-03-24" {
			t.Fatalf("after a step back across midnight: %+v, day %s", l, b.k.Listening().Day)
		}
		b.clock.Step(3 * time.Hour) // Tuesday 02:16
		time.Sleep(time.Minute)
		if u := used(t, b); u < 719 || u > 721 {
			t.Fatalf("after a step forward of 3 h: %v s", u)
		}

		// The limit runs out, is said once, and a step back across
		// midnight and forward again neither lifts it nor says it again.
		time.Sleep(9 * time.Minute)
		if st := b.p.Status(); st.State != player.Paused {
			t.Fatalf("after 20 minutes: %+v", st)
		}
		b.clock.Step(-3 * time.Hour) // Monday 23:25: Monday's hour is not Tuesday's 20 minutes
		r2 := b.refused(touch, play, ReasonDailyLimit, "daily limit reached")
		if !r2.Until.Equal(at(loc, 3, 25, 0, 0)) {
			t.Errorf("refused until %v after the step back", r2.Until)
		}
		b.clock.Step(3 * time.Hour)
		b.refused(touch, play, ReasonDailyLimit, "daily limit reached")
		synctest.Wait()
		b.mu.Lock()
		said := b.said
		b.mu.Unlock()
		if said != 1 || b.p.rulePauses() != 1 {
			t.Errorf("the limit was said %d times and paused %d times", said, b.p.rulePauses())
		}

		// A step back by a year holds the count only until Tuesday is over
		// by the uptime; then the wall clock's day counts.
		b.clock.Step(-year)
		time.Sleep(time.Hour)
		if got := b.k.Listening(); got.Day != "2026-03-24" || got.Seconds < 1200 {
			t.Fatalf("an hour after a step back by a year: %+v", got)
		}
		time.Sleep(22 * time.Hour)
		if got := b.k.Listening(); got.Day != "2025-03-25" || got.Seconds != 0 {
			t.Fatalf("once Tuesday is over: %+v", got)
		}
	})
}

// Bedtime follows the wall clock: a step forward into the night ends music
// that the gate admitted before it, once, at the end of its track; a step
// back out of the night cancels that ending until the night comes again.
// What the gate admitted in the night (bedtime content) is not ended by a
// step out of the same night and back. The sleep timer counts its minutes
// on the uptime, whatever the steps.
func TestBedtimeAndSleepTimerAcrossClockSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		loc := berlin(t)
		b := newBox(t, nightRules(), at(loc, 3, 23, 18, 0), library) // Monday 18:00
		b.do(touch, folder("story"))                                 // two tracks of 10 minutes
		b.do(touch, player.Command{Action: player.ActSleepTimer, Value: num(45)})
		time.Sleep(2 * time.Minute)
		b.clock.Step(2 * time.Hour) // 20:02: bedtime
		time.Sleep(2 * time.Second) // the rules look every second
		st := b.p.Status()
		if st.State != player.Playing || st.MaxVolume != 30 || b.k.Restrictions().Bedtime == nil {
			t.Fatalf("after a step into bedtime: %+v", st)
		}
		if s := b.k.Restrictions().SleepTimer; s == nil || *s.LeftSeconds != 45*60-122 {
			t.Errorf("sleep timer after a step forward of 2 h: %+v", s)
		}
		time.Sleep(4 * time.Minute)     // 20:06, 4 minutes before the track ends
		b.clock.Step(-90 * time.Minute) // 18:36: no bedtime
		time.Sleep(5 * time.Minute)     // past the first track's end
		st = b.p.Status()
		if st.State != player.Playing || st.Index != 1 || st.MaxVolume != 100 {
			t.Fatalf("after a step back out of bedtime: %+v", st)
		}
		if s := b.k.Restrictions().SleepTimer; s == nil || *s.LeftSeconds != 45*60-122-9*60 {
			t.Errorf("sleep timer after a step back: %+v", s)
		}
		b.clock.Step(time.Hour) // 19:41: the night again
		time.Sleep(10 * time.Minute)
		if st := b.p.Status(); st.State != player.Paused || b.p.rulePauses() != 1 {
			t.Fatalf("bedtime did not end the music once, at its track's end: %+v, %d pauses", st, b.p.rulePauses())
		}

		// Bedtime content started in the night plays on across a step out
		// of the night and back into it.
		b.do(touch, player.Command{Action: player.ActSleepTimer, Value: num(0)})
		b.do(touch, folder("lull"))
		b.clock.Step(-2 * time.Hour)
		time.Sleep(time.Second)
		b.clock.Step(2 * time.Hour)
		time.Sleep(5 * time.Minute)
		if st := b.p.Status(); st.State != player.Playing || b.p.rulePauses() != 1 {
			t.Fatalf("bedtime content ended by a step out of its night and back: %+v", st)
		}

		// The sleep timer ends after its minutes of uptime, not earlier for
		// a step forward, not later for a step back (over a parent's music,
		// which bedtime leaves alone).
		b.do(admin, folder("long"))
		b.do(touch, player.Command{Action: player.ActSleepTimer, Value: num(5)})
		b.clock.Step(year)
		time.Sleep(4 * time.Minute)
		b.clock.Step(-2 * year)
		time.Sleep(29 * time.Second)
		if st := b.p.Status(); st.State != player.Playing {
			t.Fatalf("the sleep timer ended early: %+v", st)
		}
		time.Sleep(32 * time.Second)
		if st := b.p.Status(); st.State != player.Paused || b.p.rulePauses() != 2 {
			t.Fatalf("the sleep timer did not end the music once after 5 minutes: %+v, %d pauses", st, b.p.rulePauses())
		}
	})
}
