//go:build linux

package main

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// session is the administrator's session cookie once the clock case set a
// password; call sends it.
var session *http.Cookie

type restrictions struct {
	Restrictions struct {
		Active     *string `json:"active"`
		DailyLimit *struct {
			UsedSeconds float64 `json:"used_seconds"`
		} `json:"daily_limit"`
		SleepTimer *struct {
			LeftSeconds float64 `json:"left_seconds"`
		} `json:"sleep_timer"`
		Clock string `json:"clock"`
	} `json:"restrictions"`
	State string `json:"state"`
}

// setClock steps the VM's wall clock (CLOCK_REALTIME, as `date -s` and
// network time do); the monotonic clock runs on.
func setClock(t time.Time) error {
	ts := unix.NsecToTimespec(t.UnixNano())
	if err := unix.ClockSettime(unix.CLOCK_REALTIME, &ts); err != nil {
		return fmt.Errorf("set the clock: %w", err)
	}
	return nil
}

// clockSteps steps the real wall clock under the real playerd, as network
// time does to a Pi without a real-time clock: an hour and a year, forward
// and back, with a parent's session open, a daily limit counting and the
// sleep timer running. The session stays; the counter and the timer move
// by the time that passed (measured here on the monotonic clock), not by
// the step; a card lying on the reader stays one placement. The daily
// counter is looked at only across steps within the day: a step into
// another day is a new day.
func clockSteps() error {
	monday := time.Date(2026, 3, 23, 9, 0, 0, 0, time.UTC) // 10:00 in Berlin, the rules' zone
	if err := setClock(monday); err != nil {
		return err
	}
	resp, err := request("PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`)
	if err != nil {
		return err
	}
	for _, c := range resp.Cookies() {
		if c.Name == "mupibox_admin_session" {
			session = c
		}
	}
	if session == nil {
		return fmt.Errorf("no session cookie after setting the password (%d)", resp.StatusCode)
	}
	days := []string{}
	for _, d := range []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"} {
		days = append(days, fmt.Sprintf("%q:120", d))
	}
	if _, err := call("PUT", "/api/admin/parental", `{"daily_limit_minutes":{`+strings.Join(days, ",")+`}}`, nil); err != nil {
		return err
	}
	if _, err := call("POST", "/api/command", `{"action":"play"}`, nil); err != nil {
		return err
	}
	if _, err := call("POST", "/api/command", `{"action":"sleep_timer","value":60}`, nil); err != nil {
		return err
	}
	var r restrictions
	if err := waitFor(func() bool {
		r = restrictions{}
		call("GET", "/api/status", "", &r)
		return r.State == "playing" && r.Restrictions.DailyLimit != nil && r.Restrictions.DailyLimit.UsedSeconds >= 1 && r.Restrictions.SleepTimer != nil
	}); err != nil {
		return fmt.Errorf("the rules do not count: %+v", r)
	}
	base := time.Now() // the monotonic reading: steps do not move it
	used0, left0 := r.Restrictions.DailyLimit.UsedSeconds, r.Restrictions.SleepTimer.LeftSeconds
	// An event stream open across the steps: its write deadlines and
	// heartbeat are timers, which the steps must not fire or hold.
	events, err := request("GET", "/api/events", "")
	if err != nil {
		return err
	}
	defer events.Body.Close()
	kinds := make(chan string, 1024) // read on: a client that stalls is dropped
	go func() {
		sc := bufio.NewScanner(events.Body)
		for sc.Scan() {
			if k, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				select {
				case kinds <- k:
				default:
				}
			}
		}
		close(kinds)
	}()

	for _, s := range []struct {
		name    string
		step    time.Duration
		counter bool // the step stays within the day
	}{
		{"an hour forward", time.Hour, true},
		{"two hours back", -2 * time.Hour, true},
		{"a year forward", 365 * 24 * time.Hour, false},
		{"a year back", -365 * 24 * time.Hour, false},
	} {
		if err := setClock(time.Now().Add(s.step)); err != nil {
			return err
		}
		// The status brings the counter and the timer up to date itself.
		var r restrictions
		if _, err := call("GET", "/api/status", "", &r); err != nil {
			return err
		}
		passed := time.Since(base).Seconds()
		if r.State != "playing" || r.Restrictions.SleepTimer == nil || r.Restrictions.DailyLimit == nil {
			return fmt.Errorf("%s: %+v", s.name, r)
		}
		fmt.Printf("vmtest: clock %s: wall %s, %.1f s passed, counted %.0f s (from %.0f), sleep timer %.0f s left (from %.0f)\n",
			s.name, time.Now().UTC().Format(time.RFC3339), passed, r.Restrictions.DailyLimit.UsedSeconds, used0, r.Restrictions.SleepTimer.LeftSeconds, left0)
		// Whole seconds on the box, a request's time here: 3 s of slack.
		if got, want := r.Restrictions.SleepTimer.LeftSeconds, left0-passed; math.Abs(got-want) > 3 {
			return fmt.Errorf("%s: the sleep timer has %v s left, want %.0f", s.name, got, want)
		}
		if got := r.Restrictions.DailyLimit.UsedSeconds; s.counter && math.Abs(got-(used0+passed)) > 3 {
			return fmt.Errorf("%s: %v s counted, want %.0f", s.name, got, used0+passed)
		}
		var auth struct{ Authenticated bool }
		if _, err := call("GET", "/api/admin/auth", "", &auth); err != nil || !auth.Authenticated {
			return fmt.Errorf("%s: the session ended (%v)", s.name, err)
		}
	}

	if _, err := call("POST", "/api/command", `{"action":"volume","value":33}`, nil); err != nil {
		return err
	}
	if err := heard(kinds, "volume"); err != nil {
		return fmt.Errorf("the event stream opened before the steps: %w", err)
	}

	// A card lying on the reader, read again across steps of an hour
	// (the reader types its id again and again), is one placement.
	if _, err := place(card); err != nil {
		return err
	}
	for _, step := range []time.Duration{-time.Hour, time.Hour} {
		if err := setClock(time.Now().Add(step)); err != nil {
			return err
		}
		r, err := place(card)
		if err != nil {
			return err
		}
		if r.Outcome != "repeat" {
			return fmt.Errorf("the card read again after a step of %v: %+v", step, r)
		}
	}
	return nil
}

// heard waits for an event of kind on the stream (60 s only bound a hang).
func heard(kinds <-chan string, kind string) error {
	limit := time.After(60 * time.Second)
	for {
		select {
		case k, ok := <-kinds:
			if !ok {
				return fmt.Errorf("ended before a %s event", kind)
			}
			if k == kind {
				return nil
			}
		case <-limit:
			return fmt.Errorf("no %s event", kind)
		}
	}
}
