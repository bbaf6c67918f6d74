package rules

import "time"

// night is bedtime in force: from the start of the first window to the end
// of the last one that follows it without a gap.
type night struct {
	start, end time.Time
}

// windowOn is the window that begins on day (any time that day, in loc).
func (b Bedtime) windowOn(day time.Time, loc *time.Location) (night, bool) {
	w, ok := b.Windows[dayKey(day.Weekday())]
	if !ok {
		return night{}, false
	}
	s, err1 := parseClock(w.Start)
	e, err2 := parseClock(w.End)
	if err1 != nil || err2 != nil {
		return night{}, false // Validate keeps these out
	}
	y, m, d := day.Date()
	endDay := d
	if e <= s {
		endDay++ // ends the next morning
	}
	// time.Date settles a time a daylight-saving change skips or repeats.
	return night{
		start: time.Date(y, m, d, s/60, s%60, 0, 0, loc),
		end:   time.Date(y, m, endDay, e/60, e%60, 0, 0, loc),
	}, true
}

// nightAt reports whether t is inside bedtime, and which night.
func (b Bedtime) nightAt(t time.Time, loc *time.Location) (night, bool) {
	if len(b.Windows) == 0 {
		return night{}, false
	}
	t = t.In(loc)
	var n night
	found := false
	// A window lasts less than a day, so only those beginning yesterday
	// or today can hold t.
	for off := -1; off <= 0; off++ {
		w, ok := b.windowOn(t.AddDate(0, 0, off), loc)
		if !ok || t.Before(w.start) || !t.Before(w.end) {
			continue
		}
		if !found || w.start.Before(n.start) {
			n.start = w.start
		}
		if !found || w.end.After(n.end) {
			n.end = w.end
		}
		found = true
	}
	if !found {
		return night{}, false
	}
	// A window that begins before this one ends (the next evening's, a
	// morning's on another day) continues the night.
	for range 8 {
		longer := false
		for off := -1; off <= 0; off++ {
			w, ok := b.windowOn(n.end.AddDate(0, 0, off), loc)
			if ok && !w.start.After(n.end) && w.end.After(n.end) {
				n.end, longer = w.end, true
			}
		}
		if !longer {
			break
		}
	}
	return n, true
}

// dayOf is the local calendar day of t: its key ("2006-01-02") and weekday.
func dayOf(t time.Time, loc *time.Location) (string, time.Weekday) {
	t = t.In(loc)
	return t.Format(time.DateOnly), t.Weekday()
}

// startOfDay and nextMidnight bound t's local day.
func startOfDay(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

func nextMidnight(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	y, m, d := t.Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, loc)
}
