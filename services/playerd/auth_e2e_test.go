package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/playerd/internal/auth"
)

// The trust plane, driven through a running playerd: first password,
// login, the protection rules, password change, logout, session expiry and
// the lockout, from the box itself and from the network.

const (
	pw1 = "correct horse battery"
	pw2 = "Gute Nacht, Mond!"
)

func TestAdminAuthEndToEnd(t *testing.T) {
	clk := testClock(time.Date(2026, 5, 1, 18, 0, 0, 0, time.UTC))
	data := t.TempDir()
	base, stop := startBoxWith(t, mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}}), data, func(c *setup) { c.clock = clk })
	defer stop()
	local, remote := callers(t, base)

	// No password yet: the admin area is open, as on the real box; the
	// network area is open from the box only.
	r := remote.do("GET", "/api/admin/auth", "").want(t, "auth status, unprotected", 200, "")
	if r.body["protected"] != false || r.body["authenticated"] != true {
		t.Fatalf("unprotected status %v", r.body)
	}
	remote.do("POST", "/api/admin/login", `{"password":"`+pw1+`"}`).want(t, "login without a password", 409, "admin password is not configured")
	remote.do("POST", "/api/admin/library/rescan", `{}`).want(t, "rescan, unprotected", 200, "")
	remote.do("GET", "/api/connectivity/wifi", "").want(t, "network area from the network, no password", 409, "administrator password not set")
	local.do("GET", "/api/connectivity/future", "").want(t, "network area from the box", 404, "")

	// The first password, from the home network (documented: anyone may
	// claim an unprotected box; the physical reset undoes it).
	remote.do("PUT", "/api/admin/password", `{"new_password":"kurz"}`).want(t, "short password", 400, "password must contain at least 10 characters")
	remote.do("PUT", "/api/admin/password", `{"new_password":"`+strings.Repeat("x", 129)+`"}`).want(t, "long password", 400, "password must contain at most 128 characters")
	remote.do("PUT", "/api/admin/password", `{"new_password":"`+pw1+`","extra":1}`).want(t, "unknown field", 400, `unknown field "extra"`)
	r = remote.do("PUT", "/api/admin/password", `{"new_password":"`+pw1+`"}`).want(t, "first password", 200, "")
	if r.body["protected"] != true || r.body["authenticated"] != true {
		t.Fatalf("first password answer %v", r.body)
	}
	ck := (&http.Response{Header: r.hdr}).Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/" || ck[0].MaxAge != 43200 || ck[0].Secure || len(ck[0].Value) != 43 {
		t.Fatalf("session cookie %+v", ck)
	}
	a := r.session()
	fi, err := os.Stat(filepath.Join(data, auth.PasswordFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file: %v", err)
	}
	stored, _ := os.ReadFile(filepath.Join(data, auth.PasswordFile))
	if !strings.HasPrefix(string(stored), "$argon2id$v=19$") || strings.Contains(string(stored), pw1) {
		t.Fatalf("password file holds %q", stored)
	}

	// Protected: 401 without a session, for every admin path, present or
	// future; the player area stays open.
	r = remote.do("GET", "/api/admin/auth", "").want(t, "auth status, no session", 200, "")
	if r.body["protected"] != true || r.body["authenticated"] != false {
		t.Fatalf("protected status without session %v", r.body)
	}
	for _, p := range []string{"/api/admin/library/rescan", "/api/admin/settings", "/api/admin/logout", "/api/admin/../admin/library/rescan"} {
		remote.do("POST", p, `{}`).want(t, "POST "+p+" without a session", 401, "admin authentication required")
		local.do("POST", p, `{}`).want(t, "POST "+p+" from the box without a session", 401, "admin authentication required")
	}
	remote.do("PUT", "/api/admin/password", `{"current_password":"`+pw1+`","new_password":"`+pw2+`"}`).want(t, "change without a session", 401, "admin authentication required")
	remote.do("GET", "/api/connectivity/wifi", "").want(t, "network area, no session", 401, "admin authentication required")
	local.do("GET", "/api/connectivity/future", "").want(t, "network area from the box", 404, "")
	remote.do("GET", "/api/status", "").want(t, "status", 200, "")
	remote.do("POST", "/api/command", `{"action":"volume","value":10}`).want(t, "player", 200, "")

	// With the session.
	remote.do("POST", "/api/admin/library/rescan", `{}`, "Cookie", a).want(t, "rescan with session", 200, "")
	remote.do("GET", "/api/connectivity/future", "", "Cookie", a).want(t, "network area with session", 404, "")
	if r := remote.do("GET", "/api/admin/auth", "", "Cookie", a); r.body["authenticated"] != true {
		t.Fatalf("status with session %v", r.body)
	}
	remote.do("GET", "/api/admin/auth", "", "Cookie", strings.Repeat("A", 43)).want(t, "made-up cookie", 200, "")
	remote.do("POST", "/api/admin/library/rescan", `{}`, "Cookie", strings.Repeat("A", 43)).want(t, "made-up cookie", 401, "")

	// Login: wrong, right (a second session), wrong content type.
	remote.do("POST", "/api/admin/login", `{"password":"`+pw2+`"}`).want(t, "wrong password", 401, "invalid password")
	local.do("POST", "/api/admin/login", `{"password":"`+pw1+`"}`, "Content-Type", "text/plain").want(t, "login as text", 415, "")
	r = local.do("POST", "/api/admin/login", `{"password":"`+pw1+`"}`).want(t, "login", 200, "")
	b := r.session()
	if r.body["authenticated"] != true || b == "" || b == a {
		t.Fatalf("login answer %v, cookie %q", r.body, b)
	}

	// Change: 403 on a wrong current password, nothing ends; then every
	// session ends and the changer gets a new one.
	remote.do("PUT", "/api/admin/password", `{"current_password":"`+pw2+`","new_password":"`+pw2+`"}`, "Cookie", a).want(t, "wrong current password", 403, "current password is invalid")
	local.do("POST", "/api/admin/library/rescan", `{}`, "Cookie", b).want(t, "other session after a refused change", 200, "")
	r = remote.do("PUT", "/api/admin/password", `{"current_password":"`+pw1+`","new_password":"`+pw2+`"}`, "Cookie", a).want(t, "change", 200, "")
	c := r.session()
	for what, s := range map[string]string{"the changer's old session": a, "the other device's session": b} {
		local.do("POST", "/api/admin/library/rescan", `{}`, "Cookie", s).want(t, what+" after the change", 401, "admin authentication required")
	}
	remote.do("POST", "/api/admin/library/rescan", `{}`, "Cookie", c).want(t, "new session", 200, "")
	remote.do("POST", "/api/admin/login", `{"password":"`+pw1+`"}`).want(t, "old password", 401, "invalid password")

	// Logout ends every session and clears the cookie.
	d := local.do("POST", "/api/admin/login", `{"password":"`+pw2+`"}`).want(t, "login", 200, "").session()
	r = remote.do("POST", "/api/admin/logout", "", "Cookie", c).want(t, "logout", 200, "")
	if r.body["authenticated"] != false || !strings.Contains(r.hdr.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout answer %v %q", r.body, r.hdr.Get("Set-Cookie"))
	}
	for _, s := range []string{c, d} {
		local.do("POST", "/api/admin/library/rescan", `{}`, "Cookie", s).want(t, "after logout", 401, "admin authentication required")
	}

	// Sessions last 12 hours.
	e := local.do("POST", "/api/admin/login", `{"password":"`+pw2+`"}`).want(t, "login", 200, "").session()
	clk.Advance(12*time.Hour - time.Minute)
	local.do("POST", "/api/admin/library/rescan", `{}`, "Cookie", e).want(t, "11:59 after login", 200, "")
	clk.Advance(time.Minute)
	local.do("POST", "/api/admin/library/rescan", `{}`, "Cookie", e).want(t, "12 h after login", 401, "admin authentication required")

	// Five wrong passwords from one address lock it out for 5 minutes,
	// the right one included; other addresses are not affected.
	for i := range 5 {
		remote.do("POST", "/api/admin/login", `{"password":"guess number `+string(rune('1'+i))+`"}`).want(t, "guess", 401, "invalid password")
	}
	r = remote.do("POST", "/api/admin/login", `{"password":"`+pw2+`"}`).want(t, "sixth try", 429, "too many login attempts; try again later")
	if r.hdr.Get("Retry-After") != "300" {
		t.Fatalf("Retry-After %q, want 300", r.hdr.Get("Retry-After"))
	}
	local.do("POST", "/api/admin/login", `{"password":"`+pw2+`"}`).want(t, "another address during the lockout", 200, "")
	clk.Advance(4 * time.Minute)
	r = remote.do("POST", "/api/admin/login", `{"password":"`+pw2+`"}`).want(t, "after 4 min", 429, "")
	if r.hdr.Get("Retry-After") != "60" {
		t.Fatalf("Retry-After %q after 4 min, want 60", r.hdr.Get("Retry-After"))
	}
	clk.Advance(time.Minute)
	remote.do("POST", "/api/admin/login", `{"password":"`+pw2+`"}`).want(t, "after 5 min", 200, "")
}

// A web page that rebinds its own name to the box (foreign Host) and a
// write from another site are refused before anything runs, reads
// included, and change nothing. Names the box carries pass.
func TestRebindingAndCrossOriginRefused(t *testing.T) {
	data := t.TempDir()
	base, stop := startBoxWith(t, mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}}), data, func(c *setup) { c.AllowHosts = []string{"storybox.fritz.box"} })
	defer stop()
	box := &caller{t: t, base: base, hc: &http.Client{}}
	port := base[strings.LastIndexByte(base, ':'):]
	vol := func() float64 { return box.do("GET", "/api/status", "").body["volume"].(float64) }
	before := vol()

	for _, host := range []string{"evil.example" + port, "evil.example", "box.evil.example:8090", "[evil]:8090"} {
		box.do("GET", "/api/status", "", "Host", host).want(t, "read with Host "+host, 403, "host name not allowed; use the box's IP address or name")
		box.do("POST", "/api/command", `{"action":"volume","value":5}`, "Host", host).want(t, "write with Host "+host, 403, "")
		box.do("PUT", "/api/admin/password", `{"new_password":"`+pw1+`"}`, "Host", host).want(t, "claiming the box with Host "+host, 403, "")
	}
	for _, hdr := range [][]string{{"Origin", "http://evil.example"}, {"Origin", "null"}, {"Sec-Fetch-Site", "cross-site"}} {
		box.do("POST", "/api/command", `{"action":"volume","value":5}`, hdr...).want(t, "cross-origin write "+hdr[1], 403, "")
		box.do("PUT", "/api/admin/password", `{"new_password":"`+pw1+`"}`, hdr...).want(t, "cross-origin claim "+hdr[1], 403, "")
		box.do("POST", "/api/admin/login", `{"password":"`+pw1+`"}`, hdr...).want(t, "cross-origin login "+hdr[1], 403, "")
	}
	if v := vol(); v != before {
		t.Fatalf("a refused request changed the volume from %v to %v", before, v)
	}
	if _, err := os.Stat(filepath.Join(data, auth.PasswordFile)); !os.IsNotExist(err) {
		t.Fatal("a refused request set a password")
	}
	if r := box.do("GET", "/api/admin/auth", ""); r.body["protected"] != false {
		t.Fatalf("after refused claims: %v", r.body)
	}

	for _, host := range []string{"box:8090", "BOX.local", "box.local.:8090", "localhost" + port, "127.0.0.1" + port, "storybox.fritz.box"} {
		box.do("GET", "/api/status", "", "Host", host).want(t, "Host "+host, 200, "")
	}
	box.do("POST", "/api/command", `{"action":"volume","value":5}`, "Host", "box.local:8090", "Origin", "http://box.local:8090").want(t, "same-origin write", 200, "")
}

// The physical reset: a file on the boot partition removes the password
// and every session, whether it is there at the start or appears while the
// box runs; it is acted on once.
func TestPhysicalReset(t *testing.T) {
	media, data, boot := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}}), t.TempDir(), t.TempDir()
	resetFile := filepath.Join(boot, "storybox-reset-password.txt")
	withReset := func(c *setup) { c.AdminResetFile = resetFile }
	protected := func(box *caller) bool {
		return box.do("GET", "/api/admin/auth", "").body["protected"] == true
	}

	base, stop := startBoxWith(t, media, data, withReset)
	box := &caller{t: t, base: base, hc: &http.Client{}}
	s := box.do("PUT", "/api/admin/password", `{"new_password":"`+pw1+`"}`).want(t, "first password", 200, "").session()
	// While the box runs.
	if err := os.WriteFile(resetFile, []byte("reset\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The reset removes the password first and the file last: wait for
	// both. The deadline only bounds a hang.
	gone := func() bool { _, err := os.Stat(resetFile); return os.IsNotExist(err) }
	waitUntil(t, "the reset file to be acted on", 30*time.Second, func() bool { return !protected(box) && gone() })
	box.do("PUT", "/api/admin/password", `{"new_password":"`+pw2+`"}`).want(t, "new password after the reset", 200, "")
	box.do("POST", "/api/admin/library/rescan", `{}`, "Cookie", s).want(t, "a session from before the reset", 401, "")
	stop()

	// Placed while the box was off: acted on before the API answers.
	if err := os.WriteFile(resetFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	base, stop = startBoxWith(t, media, data, withReset)
	defer stop()
	box = &caller{t: t, base: base, hc: &http.Client{}}
	if protected(box) {
		t.Fatal("a reset file placed while the box was off did not reset")
	}
	box.do("POST", "/api/admin/login", `{"password":"`+pw2+`"}`).want(t, "login after the reset", 409, "admin password is not configured")
}

// The reset file may not live where the API writes: network access alone
// must never reset the password.
func TestResetFileOutsideWhatTheAPIWrites(t *testing.T) {
	for _, args := range [][]string{
		{"-data", "/perm/playerd", "-admin-reset-file", "/perm/playerd/reset"},
		{"-media", "/perm/media", "-admin-reset-file", "/perm/media/Hoerspiele/../reset"},
		{"-allow-host", "good.example,bad_name"},
	} {
		if c, err := daemon.Parse(program, args, io.Discard); err == nil && c.Validate() == nil {
			t.Errorf("%q accepted", args)
		}
	}
	c, err := daemon.Parse(program, []string{"-admin-reset-file", "/run/playerd/boot/storybox-reset-password.txt", "-allow-host", "storybox.fritz.box, box.lan"}, io.Discard)
	if err == nil {
		err = c.Validate()
	}
	if err != nil || len(c.AllowHosts) != 2 || c.AdminResetFile == "" {
		t.Fatalf("good flags: %v %+v", err, c)
	}
	// The images' flags pass the same checks.
	for _, instance := range []string{"storybox", "storybox-vm"} {
		var cfg struct {
			PackageConfig map[string]struct{ CommandLineFlags []string }
		}
		data, err := os.ReadFile(filepath.Join("../../gokrazy-instance", instance, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatal(err)
		}
		c, err := daemon.Parse(program, cfg.PackageConfig["github.com/storybox/storybox/services/playerd"].CommandLineFlags, io.Discard)
		if err == nil {
			err = c.Validate()
		}
		if err != nil || c.AdminResetFile == "" || c.MountBoot == "" || auth.CheckResetFile(c.AdminResetFile, c.MountBoot) == nil {
			t.Errorf("%s: %v; reset file %q on %q", instance, err, c.AdminResetFile, c.MountBoot)
		}
	}
}
