package main

import (
	"net/netip"
	"testing"
	"time"
)

// A Pi has no real-time clock: it boots in the past and network time
// steps the wall clock by hours or months, either way. Through the real
// API, with a parent's session open, the parental rules in force, the
// sleep timer running, a pairing window open and the home-automation
// certificate near its renewal, the wall clock steps back and forward:
// durations (the session, the sleep timer, the daily counter, the pairing
// window) run on the uptime and neither end early nor jump; calendar
// rules (bedtime, the certificate's dates) follow the wall clock, each
// once. docs/faults.md, "The clock steps", has the rules.
func TestClockStepsThroughTheAPI(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Tag": {60}})
	clk := testClock(monday(10, 0))
	certCheck := make(chan time.Time)
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	b := startHABox(t, media, t.TempDir(), clk, func(c *setup) {
		c.certCheck, c.certAddrs = certCheck, func() ([]netip.Addr, error) { return addrs, nil }
	})
	defer b.stop()
	admin := &caller{t: t, base: b.base, hc: b.admin}
	child := client(t, b.base)
	ids := folderIDsByName(t, b.base)

	admin.do("PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`).want(t, "password", 200, "")
	admin.do("PUT", "/api/admin/parental", `{"bedtime":{"windows":`+everyNight+`,"night_max_volume":30},"daily_limit_minutes":`+everyDay(60)+`}`).
		want(t, "rules", 200, "")
	child.do("POST", "/api/command", `{"action":"folder","folder_id":"`+ids["Tag"]+`"}`).want(t, "play", 200, "")
	waitStatus(t, child, "the rules counting", keeperSawPlaying)
	child.do("POST", "/api/command", `{"action":"sleep_timer","value":30}`).want(t, "sleep timer", 200, "")
	dayMax := child.do("GET", "/api/status", "").body["max_volume"]
	firstCert := notAfter(t, admin)

	renewals := func() int { return b.logs.count("home-automation certificate renewed") }
	// check has the certificate looked at; when it returns, the check is
	// done (the second tick waits for the first to be handled).
	check := func() { certCheck <- time.Time{}; certCheck <- time.Time{} }
	// counters are the daily counter and the sleep timer's seconds left,
	// once the rules have looked after the last move of the clock.
	counters := func(what string, used, left float64) {
		t.Helper()
		var r map[string]any
		waitStatus(t, child, what, func(st map[string]any) bool {
			r = restrictions(st)
			lim, _ := r["daily_limit"].(map[string]any)
			sl, _ := r["sleep_timer"].(map[string]any)
			return lim != nil && sl != nil && lim["used_seconds"].(float64) >= used && sl["left_seconds"].(float64) == left
		})
		if u := r["daily_limit"].(map[string]any)["used_seconds"].(float64); u > used+1 {
			t.Fatalf("%s: %v s counted, want %v", what, u, used)
		}
	}
	sessionValid := func(what string) {
		t.Helper()
		admin.do("GET", "/api/admin/ha", "").want(t, what+": the parent's session", 200, "")
	}

	clk.Advance(5 * time.Minute)
	counters("5 minutes in", 300, 1500)
	admin.do("POST", "/api/admin/ha/pairing", "").want(t, "pairing window", 200, "")

	// An hour forward, three back: nothing that is a duration moves.
	clk.Step(time.Hour)
	counters("after a step forward of an hour", 300, 1500)
	sessionValid("after a step forward of an hour")
	if w := adminHA(t, admin)["pairing"].(map[string]any); w["window_open"] != true || w["window_expires_in"] != 60.0 {
		t.Errorf("pairing window after a step forward: %v", w)
	}
	clk.Step(-3 * time.Hour)
	counters("after a step back of three hours", 300, 1500)
	sessionValid("after a step back of three hours")
	if st := child.do("GET", "/api/status", "").body; restrictions(st)["active"] != nil {
		t.Errorf("a rule is active at 08:05: %v", restrictions(st))
	}

	// Into the night (19:45): bedtime is a calendar rule and holds at
	// once; out of it again (18:45), it lifts. The counters stay.
	clk.Step(11*time.Hour + 40*time.Minute)
	st := waitStatus(t, child, "bedtime after a step into the night", func(st map[string]any) bool {
		return restrictions(st)["active"] == "bedtime" && st["max_volume"] == 30.0
	})
	if b, _ := restrictions(st)["bedtime"].(map[string]any); b == nil || b["until"] != time.Date(2026, 3, 24, 7, 0, 0, 0, berlin).Format(time.RFC3339) {
		t.Errorf("bedtime: %v", restrictions(st)["bedtime"])
	}
	child.do("POST", "/api/command", `{"action":"sleep_timer","value":30}`).want(t, "sleep timer in bedtime", 200, "")
	clk.Step(-time.Hour)
	waitStatus(t, child, "no bedtime after a step back out of the night", func(st map[string]any) bool {
		return restrictions(st)["active"] == nil && st["max_volume"] == dayMax
	})
	clk.Advance(time.Minute)
	counters("a minute later", 360, 1740)
	child.do("POST", "/api/command", `{"action":"pause"}`).want(t, "pause", 200, "")

	// The certificate: 89 days of it are left. A step of 59 days leaves
	// it alone; one more day is inside the renewal margin and renews it,
	// once.
	check()
	if renewals() != 0 || !notAfter(t, admin).Equal(firstCert) {
		t.Fatalf("renewed without a reason: %d", renewals())
	}
	clk.Step(59 * 24 * time.Hour)
	check()
	if renewals() != 0 {
		t.Fatal("renewed 31 days before expiry")
	}
	clk.Step(24 * time.Hour)
	check()
	waitUntil(t, "the renewal", 5*time.Second, func() bool { return renewals() == 1 })
	renewed := notAfter(t, admin)
	if !renewed.After(firstCert) {
		t.Fatalf("renewed until %v, before until %v", renewed, firstCert)
	}
	check()
	sessionValid("60 days later on the wall clock")
	// The time server was wrong: back by the 60 days. The new certificate
	// would not be valid yet for a client with the right time: renewed,
	// once more, and then left alone.
	clk.Step(-60 * 24 * time.Hour)
	check()
	waitUntil(t, "the renewal after a step back", 5*time.Second, func() bool { return renewals() == 2 })
	if got := notAfter(t, admin); !got.Before(renewed) {
		t.Errorf("after the step back the certificate runs until %v", got)
	}
	check()
	if renewals() != 2 {
		t.Errorf("%d renewals, want 2", renewals())
	}

	// The session ends 12 hours after the login, by the uptime.
	clk.Advance(12*time.Hour - 7*time.Minute)
	sessionValid("11:59 after the login")
	clk.Advance(time.Minute)
	admin.do("GET", "/api/admin/ha", "").want(t, "12 h after the login", 401, "admin authentication required")
}

func adminHA(t *testing.T, c *caller) map[string]any {
	t.Helper()
	return c.do("GET", "/api/admin/ha", "").want(t, "home-automation status", 200, "").body
}

// notAfter is the end of the home-automation certificate's validity.
func notAfter(t *testing.T, c *caller) time.Time {
	t.Helper()
	cert, _ := adminHA(t, c)["certificate"].(map[string]any)
	s, _ := cert["not_after"].(string)
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("certificate %v: %v", cert, err)
	}
	return at
}
