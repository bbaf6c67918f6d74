package auth

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
)

// cheap makes argon2 fast; the benchmark measures the real cost.
var cheap = Params{Memory: 64, Time: 1, Threads: 1}

func newManager(t *testing.T) (*Manager, *clocktest.Clock, string) {
	t.Helper()
	dir := t.TempDir()
	c := clocktest.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	m, err := New(Config{Dir: dir, Params: cheap, Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	return m, c, dir
}

var (
	ctx    = context.Background()
	parent = netip.MustParseAddr("192.168.1.20")
	child  = netip.MustParseAddr("192.168.1.21")
)

const pw = "correct horse battery"

func kindIs(t *testing.T, err error, k fault.Kind, msg string) {
	t.Helper()
	if fault.KindOf(err) != k || !strings.Contains(fault.Message(err), msg) {
		t.Fatalf("got %v (%s), want %s %q", err, fault.KindOf(err), k, msg)
	}
}

func TestHashFormat(t *testing.T) {
	h := newHash(pw, Params{Memory: 64, Time: 2, Threads: 2})
	s := h.String()
	if !strings.HasPrefix(s, "$argon2id$v=19$m=64,t=2,p=2$") || strings.Contains(s, "=$") {
		t.Fatalf("PHC string %q", s)
	}
	back, err := parseHash(s + "\n")
	if err != nil || !back.matches(pw) || back.matches(pw+"!") || back.matches("") {
		t.Fatalf("round trip: %v", err)
	}
	if one, two := newHash(pw, cheap), newHash(pw, cheap); one.String() == two.String() {
		t.Error("two hashes of one password are equal: no salt")
	}
	if err := DefaultParams.check(); err != nil || DefaultParams.Memory > 64<<10 {
		t.Errorf("default parameters: %v", err)
	}
	for _, bad := range []string{
		"", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=16$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=4194304,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5", // 4 GiB
		"$argon2id$v=19$m=64,t=0,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=64,t=1,p=1,x=2$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=64,t=1,p=1$!!$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5",
	} {
		if _, err := parseHash(bad); err == nil {
			t.Errorf("parseHash(%q) accepted", bad)
		}
	}
}

func TestFirstPasswordThenLogin(t *testing.T) {
	m, _, dir := newManager(t)
	if m.Protected() {
		t.Fatal("protected without a password")
	}
	_, err := m.Login(ctx, parent, pw)
	kindIs(t, err, fault.Conflict, "admin password is not configured")
	_, err = m.SetPassword(ctx, parent, "", "too short")
	kindIs(t, err, fault.Invalid, "at least 10 characters")
	_, err = m.SetPassword(ctx, parent, "", strings.Repeat("ä", 129))
	kindIs(t, err, fault.Invalid, "at most 128 characters")
	if m.Protected() {
		t.Fatal("a refused password was set")
	}
	s, err := m.SetPassword(ctx, parent, "", strings.Repeat("ä", 10)) // characters, not bytes
	if err != nil || !m.Valid(s.Token) || !m.Protected() {
		t.Fatalf("first password: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, PasswordFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file: %v %v", err, fi.Mode())
	}
	data, _ := os.ReadFile(filepath.Join(dir, PasswordFile))
	if strings.Contains(string(data), "ä") || !strings.HasPrefix(string(data), "$argon2id$") {
		t.Fatalf("password file holds %q", data)
	}
	// A restart reads it back.
	m2, err := New(Config{Dir: dir, Params: cheap})
	if err != nil || !m2.Protected() || m2.Valid(s.Token) {
		t.Fatalf("after restart: %v; sessions live in memory only", err)
	}
	if _, err := m2.Login(ctx, parent, strings.Repeat("ä", 10)); err != nil {
		t.Fatal(err)
	}
	_, err = m2.Login(ctx, parent, "wrong password")
	kindIs(t, err, fault.Unauthorized, "invalid password")
}

func TestChangeEndsEverySession(t *testing.T) {
	m, _, _ := newManager(t)
	first, _ := m.SetPassword(ctx, parent, "", pw)
	other, err := m.Login(ctx, child, pw)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.SetPassword(ctx, parent, "not the password", "another password")
	kindIs(t, err, fault.Forbidden, "current password is invalid")
	if !m.Valid(first.Token) || !m.Valid(other.Token) {
		t.Fatal("a refused change ended sessions")
	}
	s, err := m.SetPassword(ctx, parent, pw, "another password")
	if err != nil {
		t.Fatal(err)
	}
	if m.Valid(first.Token) || m.Valid(other.Token) || !m.Valid(s.Token) {
		t.Fatal("after a change only the new session may live")
	}
	if _, err := m.Login(ctx, child, pw); fault.KindOf(err) != fault.Unauthorized {
		t.Fatalf("the old password still works: %v", err)
	}
	m.Logout()
	if m.Valid(s.Token) {
		t.Fatal("logout left a session")
	}
}

func TestSessionExpiry(t *testing.T) {
	m, c, _ := newManager(t)
	s, _ := m.SetPassword(ctx, parent, "", pw)
	c.Advance(SessionTTL - time.Second)
	if !m.Valid(s.Token) {
		t.Fatal("session ended early")
	}
	c.Advance(time.Second)
	if m.Valid(s.Token) {
		t.Fatal("session outlived 12 h")
	}
	if m.Valid("") || m.Valid(strings.Repeat("A", tokenLen)) {
		t.Fatal("made-up token accepted")
	}
	var toks []string
	for range maxSessions + 5 {
		s, err := m.Login(ctx, parent, pw)
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, s.Token)
		c.Advance(time.Second)
	}
	if len(m.sessions) != maxSessions || m.Valid(toks[0]) || !m.Valid(toks[len(toks)-1]) {
		t.Fatalf("%d sessions kept; the oldest must go first", len(m.sessions))
	}
}

// A session lasts 12 hours of uptime whatever network time does to the
// wall clock: a step forward by a year does not log the parent out, a step
// back does not keep the session alive past its 12 hours.
func TestSessionAcrossClockSteps(t *testing.T) {
	m, c, _ := newManager(t)
	s, _ := m.SetPassword(ctx, parent, "", pw)
	c.Advance(time.Hour)
	c.Step(365 * 24 * time.Hour)
	if !m.Valid(s.Token) {
		t.Fatal("a step forward ended the session")
	}
	c.Step(-2 * 365 * 24 * time.Hour)
	c.Advance(SessionTTL - time.Hour - time.Second)
	if !m.Valid(s.Token) {
		t.Fatal("a step back ended the session")
	}
	c.Advance(time.Second)
	if m.Valid(s.Token) {
		t.Fatal("after a step back the session outlived 12 h")
	}
}

// A lockout lasts its 5 minutes of uptime across steps of the wall clock.
func TestLockoutAcrossClockSteps(t *testing.T) {
	m, c, _ := newManager(t)
	m.SetPassword(ctx, parent, "", pw)
	for range maxFailures {
		m.Login(ctx, child, "wrong password")
	}
	c.Step(time.Hour) // forward past the 5 minutes
	_, err := m.Login(ctx, child, pw)
	kindIs(t, err, fault.Busy, "too many login attempts")
	if d := fault.RetryAfterOf(err); d != lockFor {
		t.Errorf("Retry-After %v after a step forward, want %v", d, lockFor)
	}
	c.Step(-24 * time.Hour)
	c.Advance(lockFor - time.Second)
	_, err = m.Login(ctx, child, pw)
	if d := fault.RetryAfterOf(err); fault.KindOf(err) != fault.Busy || d != time.Second {
		t.Errorf("after a step back and 4:59: %v, Retry-After %v", err, d)
	}
	c.Advance(time.Second)
	if _, err := m.Login(ctx, child, pw); err != nil {
		t.Fatalf("still locked after 5 minutes and a step back: %v", err)
	}
}

func TestLockout(t *testing.T) {
	m, c, _ := newManager(t)
	m.SetPassword(ctx, parent, "", pw)
	for i := range maxFailures {
		_, err := m.Login(ctx, child, fmt.Sprintf("guess %d....", i))
		kindIs(t, err, fault.Unauthorized, "invalid password")
		c.Advance(10 * time.Second)
	}
	_, err := m.Login(ctx, child, pw)
	kindIs(t, err, fault.Busy, "too many login attempts; try again later")
	if d := fault.RetryAfterOf(err); d != lockFor-10*time.Second {
		t.Errorf("Retry-After %v, want the rest of 5 min", d)
	}
	// The lock holds one address, not everyone.
	if _, err := m.Login(ctx, parent, pw); err != nil {
		t.Fatalf("another address is locked too: %v", err)
	}
	// A password change from the locked address is refused the same way.
	_, err = m.SetPassword(ctx, child, pw, "another password")
	kindIs(t, err, fault.Busy, "too many login attempts")
	c.Advance(lockFor)
	if _, err := m.Login(ctx, child, pw); err != nil {
		t.Fatalf("still locked after 5 min: %v", err)
	}
	// Failures far apart do not add up; a success forgets them.
	for range 2 * maxFailures {
		_, err := m.Login(ctx, child, "wrong password")
		kindIs(t, err, fault.Unauthorized, "invalid password")
		c.Advance(failWindow)
	}
	if len(m.fails) != 1 {
		t.Fatalf("table holds %d addresses", len(m.fails))
	}
	m.Login(ctx, child, pw)
	if len(m.fails) != 0 {
		t.Fatal("a success left the failures")
	}
}

// A flood of source addresses cannot grow the table without bound.
func TestLockoutTableBounded(t *testing.T) {
	l := lockout{}
	now := time.Hour
	base := netip.MustParseAddr("2001:db8::1").As16()
	for i := range 5 * maxTracked {
		b := base
		b[12], b[13], b[14] = byte(i>>16), byte(i>>8), byte(i)
		addr := netip.AddrFrom16(b)
		if err := l.begin(addr, now); err != nil {
			t.Fatal(err)
		}
		l.end(addr, failed, now)
		now += time.Millisecond
	}
	if len(l) > maxTracked {
		t.Fatalf("%d addresses tracked, at most %d", len(l), maxTracked)
	}
}

// Checks in flight count against the limit, so a burst of parallel guesses
// from one address cannot get past five.
func TestParallelGuessesCount(t *testing.T) {
	l := lockout{}
	now := time.Hour
	for range maxFailures {
		if err := l.begin(child, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.begin(child, now); fault.KindOf(err) != fault.Busy {
		t.Fatalf("sixth parallel check: %v", err)
	}
}

// The argon2 gate runs one computation at a time and turns away callers
// beyond the queue at once.
func TestArgonGate(t *testing.T) {
	m, _, _ := newManager(t)
	m.SetPassword(ctx, parent, "", pw)
	m.gate <- struct{}{} // a verification in progress
	var wg sync.WaitGroup
	errs := make(chan error, maxWaiting)
	for i := range maxWaiting {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.Login(ctx, netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), pw)
			errs <- err
		}()
	}
	for m.waiting.Load() < maxWaiting {
		time.Sleep(time.Millisecond)
	}
	_, err := m.Login(ctx, parent, pw)
	kindIs(t, err, fault.Busy, "too many login attempts")
	if fault.RetryAfterOf(err) != time.Second {
		t.Errorf("Retry-After %v", fault.RetryAfterOf(err))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	<-m.gate
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("queued login: %v", err)
		}
	}
	// A client that leaves while queued costs nothing.
	m.gate <- struct{}{}
	_, err = m.Login(cctx, parent, pw)
	if fault.KindOf(err) != fault.Busy || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while queued: %v", err)
	}
	<-m.gate
	if len(m.fails) != 0 {
		t.Error("a check that never ran counted")
	}
}

// A second password change while one runs is turned away, not queued.
func TestOneChangeAtATime(t *testing.T) {
	m, _, _ := newManager(t)
	m.changing <- struct{}{}
	_, err := m.SetPassword(ctx, parent, "", pw)
	kindIs(t, err, fault.Busy, "another password change is in progress")
	<-m.changing
	if m.Protected() {
		t.Fatal("the refused change set a password")
	}
	if _, err := m.SetPassword(ctx, parent, "", pw); err != nil {
		t.Fatal(err)
	}
}

// A password file that cannot be read keeps the box protected.
func TestBrokenFileFailsClosed(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, PasswordFile), []byte("garbage\n"), 0o600)
	m, err := New(Config{Dir: dir, Params: cheap})
	if err == nil || m == nil || !m.Protected() {
		t.Fatalf("corrupt file: %v, protected %v", err, m != nil && m.Protected())
	}
	_, err = m.Login(ctx, parent, pw)
	kindIs(t, err, fault.Internal, "reset it on the box")
	_, err = m.SetPassword(ctx, parent, "", pw)
	kindIs(t, err, fault.Internal, "reset it on the box")
	if err := m.Reset(); err != nil || m.Protected() {
		t.Fatalf("reset: %v", err)
	}
}

func TestResetFile(t *testing.T) {
	m, _, dir := newManager(t)
	boot := t.TempDir()
	file := filepath.Join(boot, "storybox-reset-password.txt")
	if reset, err := m.CheckReset(file); reset || err != nil {
		t.Fatalf("no file: %v %v", reset, err)
	}
	s, _ := m.SetPassword(ctx, parent, "", pw)
	os.WriteFile(file, []byte("reset\n"), 0o644)
	stamp := time.Date(2026, 5, 2, 8, 0, 0, 0, time.UTC)
	os.Chtimes(file, stamp, stamp)
	if reset, err := m.CheckReset(file); !reset || err != nil {
		t.Fatalf("reset: %v %v", reset, err)
	}
	if m.Protected() || m.Valid(s.Token) {
		t.Fatal("password or session survived the reset")
	}
	if _, err := os.Stat(filepath.Join(dir, PasswordFile)); !os.IsNotExist(err) {
		t.Fatal("password file survived the reset")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatal("reset file not removed")
	}
	// The same file again (a read-only partition keeps it): no second
	// reset of the new password.
	m.SetPassword(ctx, parent, "", pw)
	os.WriteFile(file, []byte("reset\n"), 0o644)
	os.Chtimes(file, stamp, stamp)
	if reset, err := m.CheckReset(file); reset || err != nil || !m.Protected() {
		t.Fatalf("the same reset file acted twice: %v %v", reset, err)
	}
	// A new placing resets again.
	later := stamp.Add(time.Hour)
	os.Chtimes(file, later, later)
	if reset, err := m.CheckReset(file); !reset || err != nil || m.Protected() {
		t.Fatalf("a new reset file: %v %v", reset, err)
	}
	os.Mkdir(file, 0o755)
	if _, err := m.CheckReset(file); err == nil {
		t.Error("a directory is not a reset file")
	}
}

func TestWatchReset(t *testing.T) {
	m, _, _ := newManager(t)
	m.SetPassword(ctx, parent, "", pw)
	file := filepath.Join(t.TempDir(), "reset")
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	resets := make(chan bool, 1)
	go func() {
		m.WatchReset(cctx, file, time.Millisecond, func(reset bool, err error) { resets <- reset })
		close(done)
	}()
	os.WriteFile(file, nil, 0o644)
	if !<-resets || m.Protected() {
		t.Fatal("the watcher did not reset")
	}
	cancel()
	<-done
}

func TestHosts(t *testing.T) {
	h := NewHosts("Storybox", []string{"box.fritz.box"})
	for host, want := range map[string]bool{
		"storybox:8090": true, "STORYBOX.local": true, "storybox.local.:8090": true, "storybox": true,
		"box.fritz.box:8090": true, "localhost:8090": true, "localhost": true,
		"127.0.0.1:8090": true, "192.168.1.9": true, "[::1]:8090": true, "[fe80::1]": true, "[2001:db8::7]:80": true,
		"": false, "evil.example": false, "evil.example:8090": false, "storybox.evil.example": false,
		"storybox.local.evil.example": false, "[evil.example]:8090": false, "::1": false,
		"127.0.0.1:http": false, "127.0.0.1:": false, "[::1]x": false, "localhost.evil": false,
		"box": false, "fritz.box": false, "0x7f000001": false, "127.1": false,
	} {
		if h.Allowed(host) != want {
			t.Errorf("Allowed(%q) = %v", host, !want)
		}
	}
	h.Set("kiste", nil)
	if h.Allowed("box.fritz.box") || h.Allowed("storybox.local") || !h.Allowed("kiste.local:8090") {
		t.Error("Set did not replace the names")
	}
	if g := NewHosts("storybox.lan", nil); !g.Allowed("storybox.lan") || !g.Allowed("storybox.local") {
		t.Error("a host name with a domain")
	}
	for _, bad := range []string{"", "a b", "-x", "x_y", "a..b", "ex:80", strings.Repeat("a", 64)} {
		if CheckHostName(bad) == nil {
			t.Errorf("CheckHostName(%q) accepted", bad)
		}
	}
	if err := CheckHostName("Box-1.fritz.box."); err != nil {
		t.Error(err)
	}
}

func TestCallerAt(t *testing.T) {
	for addr, want := range map[string]Caller{
		"127.0.0.1:5000":          {Via: Loopback, Addr: netip.MustParseAddr("127.0.0.1")},
		"[::1]:5000":              {Via: Loopback, Addr: netip.MustParseAddr("::1")},
		"[::ffff:127.0.0.1]:5000": {Via: Loopback, Addr: netip.MustParseAddr("127.0.0.1")},
		"192.168.1.20:5000":       {Via: Network, Addr: parent},
		"[fe80::1%eth0]:5000":     {Via: Network, Addr: netip.MustParseAddr("fe80::1")},
		"garbage":                 {Via: Network},
	} {
		if got := CallerAt(addr); got != want {
			t.Errorf("CallerAt(%q) = %+v", addr, got)
		}
	}
	if c := CallerFrom(ctx); c.Via != Network || c.Admin {
		t.Errorf("no caller in the context: %+v", c)
	}
}
