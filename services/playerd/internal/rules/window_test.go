package rules

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the image has no zone database; neither may the test machine
)

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// at builds a local time in loc: 2026-03-23 is a Monday.
func at(loc *time.Location, month time.Month, day, hour, minute int) time.Time {
	return time.Date(2026, month, day, hour, minute, 0, 0, loc)
}

func schoolNights() Bedtime {
	w := Window{Start: "19:30", End: "07:00"}
	return Bedtime{Windows: map[string]Window{"sun": w, "mon": w, "tue": w, "wed": w, "thu": w}}
}

func TestNightAcrossMidnightAndWeekdays(t *testing.T) {
	loc := berlin(t)
	b := schoolNights()
	for _, c := range []struct {
		name  string
		t     time.Time
		in    bool
		until time.Time
	}{
		{"Monday before the window", at(loc, 3, 23, 19, 29), false, time.Time{}},
		{"Monday at its start", at(loc, 3, 23, 19, 30), true, at(loc, 3, 24, 7, 0)},
		{"Monday just before midnight", at(loc, 3, 23, 23, 59), true, at(loc, 3, 24, 7, 0)},
		{"Tuesday midnight: the Monday window goes on", at(loc, 3, 24, 0, 0), true, at(loc, 3, 24, 7, 0)},
		{"Tuesday 06:59", at(loc, 3, 24, 6, 59), true, at(loc, 3, 24, 7, 0)},
		{"Tuesday 07:00: over", at(loc, 3, 24, 7, 0), false, time.Time{}},
		{"Tuesday noon", at(loc, 3, 24, 12, 0), false, time.Time{}},
		// Thursday's window runs into Friday morning although Friday has none.
		{"Friday 06:00", at(loc, 3, 27, 6, 0), true, at(loc, 3, 27, 7, 0)},
		{"Friday evening: no window", at(loc, 3, 27, 21, 0), false, time.Time{}},
		{"Saturday 06:00: Friday had none", at(loc, 3, 28, 6, 0), false, time.Time{}},
		{"Sunday evening", at(loc, 3, 22, 20, 0), true, at(loc, 3, 23, 7, 0)},
		{"Monday 06:00 from Sunday's window", at(loc, 3, 23, 6, 0), true, at(loc, 3, 23, 7, 0)},
	} {
		n, in := b.nightAt(c.t, loc)
		if in != c.in || in && !n.end.Equal(c.until) {
			t.Errorf("%s (%v): in %v until %v, want %v until %v", c.name, c.t, in, n.end, c.in, c.until)
		}
	}
}

func TestNightSameDayAndJoinedWindows(t *testing.T) {
	loc := berlin(t)
	b := Bedtime{Windows: map[string]Window{
		"mon": {Start: "13:00", End: "15:00"}, // a nap
		"tue": {Start: "20:00", End: "06:30"},
		"wed": {Start: "06:00", End: "08:00"}, // begins before Tuesday's ends
	}}
	if n, in := b.nightAt(at(loc, 3, 23, 14, 0), loc); !in || !n.end.Equal(at(loc, 3, 23, 15, 0)) {
		t.Errorf("nap: %v %v", in, n)
	}
	if _, in := b.nightAt(at(loc, 3, 23, 15, 0), loc); in {
		t.Error("nap still in force at its end")
	}
	n, in := b.nightAt(at(loc, 3, 24, 23, 0), loc)
	if !in || !n.start.Equal(at(loc, 3, 24, 20, 0)) || !n.end.Equal(at(loc, 3, 25, 8, 0)) {
		t.Errorf("joined night: %v %v..%v, want 20:00..08:00 next day", in, n.start, n.end)
	}
}

// The night the clocks go forward is an hour shorter and the one they go
// back an hour longer; the window still ends at 07:00 local time, and the
// day (and with it the daily counter) turns at local midnight.
func TestNightOnDaylightSavingChanges(t *testing.T) {
	loc := berlin(t)
	b := Bedtime{Windows: map[string]Window{"sat": {Start: "22:00", End: "07:00"}}}
	for _, c := range []struct {
		name  string
		sat   int
		month time.Month
		hours float64
	}{
		{"spring forward (29 March 2026)", 28, time.March, 8},
		{"fall back (25 October 2026)", 24, time.October, 10},
	} {
		start := at(loc, c.month, c.sat, 22, 0)
		n, in := b.nightAt(start, loc)
		if !in || n.end.Sub(n.start).Hours() != c.hours {
			t.Errorf("%s: in %v, %v..%v (%v), want %v hours", c.name, in, n.start, n.end, n.end.Sub(n.start), c.hours)
			continue
		}
		if got := n.end.In(loc).Format("15:04"); got != "07:00" {
			t.Errorf("%s: ends %s local", c.name, got)
		}
		last := n.end.Add(-time.Minute)
		if _, in := b.nightAt(last, loc); !in {
			t.Errorf("%s: 06:59 not in the night", c.name)
		}
		if _, in := b.nightAt(n.end, loc); in {
			t.Errorf("%s: 07:00 still in the night", c.name)
		}
		// The Sunday is 23 or 25 hours long, from local midnight to midnight.
		sun := at(loc, c.month, c.sat+1, 12, 0)
		day := nextMidnight(sun, loc).Sub(startOfDay(sun, loc)).Hours()
		if want := 24 + (c.hours - 9); day != want {
			t.Errorf("%s: Sunday has %v hours, want %v", c.name, day, want)
		}
		if d, wd := dayOf(startOfDay(sun, loc), loc); wd != time.Sunday || d != sun.Format(time.DateOnly) {
			t.Errorf("%s: local midnight is day %s (%v)", c.name, d, wd)
		}
		if d, _ := dayOf(startOfDay(sun, loc).Add(-time.Nanosecond), loc); d == sun.Format(time.DateOnly) {
			t.Errorf("%s: the instant before local midnight is already Sunday", c.name)
		}
	}
}

func TestValidate(t *testing.T) {
	good := Rules{
		Bedtime:           Bedtime{Windows: map[string]Window{"mon": {Start: "19:30", End: "07:00"}}, Folders: []string{"a"}, NightMaxVolume: 30},
		DailyLimitMinutes: map[string]int{"sat": 120, "sun": 0},
		LockedFolders:     []string{"b"},
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Rules)
		want string
	}{
		{func(r *Rules) { r.Bedtime.Windows["monday"] = Window{"19:00", "07:00"} }, `bedtime.windows: "monday" is not a weekday`},
		{func(r *Rules) { r.Bedtime.Windows["tue"] = Window{"24:00", "07:00"} }, "bedtime.windows.tue.start"},
		{func(r *Rules) { r.Bedtime.Windows["tue"] = Window{"19:00", "7:00"} }, "bedtime.windows.tue.end"},
		{func(r *Rules) { r.Bedtime.Windows["tue"] = Window{"+1:00", "07:00"} }, "bedtime.windows.tue.start"},
		{func(r *Rules) { r.Bedtime.Windows["tue"] = Window{"19:00", "19:00"} }, "start and end are both"},
		{func(r *Rules) { r.Bedtime.NightMaxVolume = 101 }, "night_max_volume"},
		{func(r *Rules) { r.Bedtime.GraceMinutes = -1 }, "grace_minutes"},
		{func(r *Rules) { r.Bedtime.Folders = []string{"a", "a"} }, "listed twice"},
		{func(r *Rules) { r.LockedFolders = []string{""} }, "locked_folders[0]"},
		{func(r *Rules) { r.DailyLimitMinutes["sat"] = 1441 }, "daily_limit_minutes.sat"},
		{func(r *Rules) { r.DailyLimitMinutes["xyz"] = 1 }, "daily_limit_minutes"},
	} {
		r := good.Clone()
		c.edit(&r)
		err := r.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error naming %q, got %v", c.want, err)
		}
	}
	if _, err := Parse([]byte(`{"bedtime":{"window":{}}}`)); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("unknown field: %v", err)
	}
	if _, err := Parse([]byte(`{} {}`)); err == nil {
		t.Error("trailing data accepted")
	}
}
