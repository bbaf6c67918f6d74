package pairing

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
)

type fixture struct {
	m       *Manager
	clk     *clocktest.Clock
	file    string
	changes atomic.Int32
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clk: clocktest.New(time.Date(2026, 3, 1, 19, 0, 0, 0, time.UTC)), file: filepath.Join(t.TempDir(), "clients.json")}
	m, err := New(Config{File: f.file, DeviceID: "7e1f82a4-55ab-47d7-8b60-02e8dff65b90", Clock: f.clk,
		OnChange: func() { f.changes.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	return f
}

var ha = StartRequest{ClientName: "Home Assistant", ClientID: "8c4c4f52-6e35-44dd-930a-bdb838cd60d8", RequestedScopes: []string{"read", "control", "power"}}

// pair runs the whole flow and returns the grant.
func (f *fixture) pair(t *testing.T, allowed ...Scope) Grant {
	t.Helper()
	if _, err := f.m.Enable(allowed); err != nil {
		t.Fatal(err)
	}
	st, err := f.m.Start(ha)
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: ha.ClientID, Code: f.m.Prompt().Code})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPairEndToEnd(t *testing.T) {
	f := newFixture(t)
	if _, err := f.m.Start(ha); !errors.Is(err, ErrNotEnabled) {
		t.Fatalf("start without a window: %v", err)
	}
	if _, err := f.m.Enable([]Scope{Read, Control}); err != nil {
		t.Fatal(err)
	}
	if p := f.m.Prompt(); p == nil || p.Code != "" {
		t.Fatalf("open window prompt %+v", p)
	}
	st, err := f.m.Start(ha)
	if err != nil {
		t.Fatal(err)
	}
	if st.ExpiresIn != 300 || st.CodeLength != 6 || st.Confirmation != "display_code" || len(st.PairingID) < 32 {
		t.Errorf("start answer %+v", st)
	}
	p := f.m.Prompt()
	if p == nil || len(p.Code) != 6 || strings.Trim(p.Code, "0123456789") != "" {
		t.Fatalf("prompt %+v", p)
	}
	if strings.Join(Strings(p.Granted), ",") != "read,control" || strings.Join(Strings(p.Requested), ",") != "read,control,power" {
		t.Errorf("requested %v granted %v: power was not allowed", p.Requested, p.Granted)
	}
	if s := f.m.Status(); s.Pending == nil || s.WindowOpen {
		t.Errorf("status %+v", s)
	}
	// A second client while the first is pending.
	if _, err := f.m.Enable(nil); !errors.Is(err, ErrInProgress) {
		t.Errorf("enable while pending: %v", err)
	}
	if _, err := f.m.Start(ha); !errors.Is(err, ErrInProgress) {
		t.Errorf("second start: %v", err)
	}
	g, err := f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: ha.ClientID, Code: p.Code[:3] + " " + p.Code[3:]})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Success || g.TokenType != "Bearer" || len(g.AccessToken) < 43 || g.DeviceID == "" || strings.Join(g.Scopes, ",") != "read,control" {
		t.Errorf("grant %+v", g)
	}
	if f.m.Prompt() != nil {
		t.Error("the code is still on the screen after pairing")
	}
	if _, err := f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: ha.ClientID, Code: p.Code}); !errors.Is(err, ErrExpired) {
		t.Errorf("code used twice: %v", err)
	}
	c, err := f.m.Authenticate(g.AccessToken)
	if err != nil || c.ID != ha.ClientID || !c.Has(Control) || c.Has(Power) {
		t.Errorf("authenticate: %+v %v", c, err)
	}
	if f.changes.Load() == 0 {
		t.Error("the screen was never told")
	}

	// The token survives a restart, stored hashed in a private file.
	data, err := os.ReadFile(f.file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), g.AccessToken) || !strings.Contains(string(data), hashToken(g.AccessToken)) {
		t.Error("the clients file does not keep the token hashed")
	}
	if fi, _ := os.Stat(f.file); fi.Mode().Perm() != 0o600 {
		t.Errorf("clients file mode %v", fi.Mode().Perm())
	}
	m2, err := New(Config{File: f.file, DeviceID: "x", Clock: f.clk})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Authenticate(g.AccessToken); err != nil {
		t.Errorf("after restart: %v", err)
	}
	other := "A"
	if strings.HasSuffix(g.AccessToken, other) {
		other = "B"
	}
	if _, err := m2.Authenticate(g.AccessToken[:len(g.AccessToken)-1] + other); !errors.Is(err, ErrBadToken) {
		t.Errorf("a wrong token: %v", err)
	}
	if err := m2.Revoke(ha.ClientID); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Authenticate(g.AccessToken); !errors.Is(err, ErrBadToken) {
		t.Errorf("revoked token: %v", err)
	}
	if err := m2.Revoke(ha.ClientID); fault.KindOf(err) != fault.NotFound {
		t.Errorf("revoke twice: %v", err)
	}
}

func TestFiveWrongCodesVoidThePairing(t *testing.T) {
	f := newFixture(t)
	f.m.Enable(nil)
	st, err := f.m.Start(ha)
	if err != nil {
		t.Fatal(err)
	}
	code := f.m.Prompt().Code
	wrong := "000000"
	if code == wrong {
		wrong = "000001"
	}
	for i := range MaxAttempts {
		_, err := f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: ha.ClientID, Code: wrong})
		if !errors.Is(err, ErrWrongCode) {
			t.Fatalf("wrong code %d: %v", i+1, err)
		}
	}
	// The right code no longer helps: the pairing is void.
	if _, err := f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: ha.ClientID, Code: code}); !errors.Is(err, ErrExpired) {
		t.Errorf("after five wrong codes: %v", err)
	}
	if f.m.Prompt() != nil {
		t.Error("a void code is still on the screen")
	}
	// Cooldown: even a new window lets nobody start for a while.
	f.m.Enable(nil)
	_, err = f.m.Start(ha)
	if fault.KindOf(err) != fault.Busy || fault.RetryAfterOf(err) <= 0 {
		t.Errorf("start in the cooldown: %v", err)
	}
	f.clk.Advance(DefaultCooldown)
	f.m.Enable(nil)
	if _, err := f.m.Start(ha); err != nil {
		t.Errorf("start after the cooldown: %v", err)
	}
}

// The window, the code's lifetime, the cooldown and the request budget are
// durations: network time stepping the wall clock by a year, forward or
// back, neither ends them early nor keeps them open.
func TestTimeLimitsAcrossClockSteps(t *testing.T) {
	year := 365 * 24 * time.Hour
	f := newFixture(t)
	if left, _ := f.m.Enable(nil); left != DefaultWindow {
		t.Errorf("window open for %v", left)
	}
	f.clk.Step(year)
	if p := f.m.Prompt(); p == nil || p.Left != DefaultWindow {
		t.Fatalf("a step forward closed the window: %+v", p)
	}
	st, err := f.m.Start(ha)
	if err != nil {
		t.Fatalf("start after a step forward: %v", err)
	}
	f.clk.Step(-2 * year)
	f.clk.Advance(DefaultLifetime - time.Second)
	if p := f.m.Prompt(); p == nil || p.Left != time.Second {
		t.Fatalf("the code after a step back and 299 s: %+v", p)
	}
	if s := f.m.Status(); s.Pending == nil || s.Pending.ExpiresIn != 1 {
		t.Errorf("status: %+v", s.Pending)
	}
	f.clk.Advance(time.Second)
	if _, err := f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: ha.ClientID, Code: "000000"}); !errors.Is(err, ErrExpired) {
		t.Errorf("a step back kept the code alive: %v", err)
	}

	// The cooldown after five wrong codes.
	f.m.Enable(nil)
	st, _ = f.m.Start(ha)
	wrong := "000000"
	if f.m.Prompt().Code == wrong {
		wrong = "111111"
	}
	for range MaxAttempts {
		f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: ha.ClientID, Code: wrong})
	}
	f.clk.Step(year)
	f.m.Enable(nil)
	if _, err := f.m.Start(ha); fault.RetryAfterOf(err) != DefaultCooldown {
		t.Errorf("start after a step forward in the cooldown: %v (Retry-After %v)", err, fault.RetryAfterOf(err))
	}
	f.clk.Step(-year)
	f.clk.Advance(DefaultCooldown)
	f.m.Enable(nil)
	if _, err := f.m.Start(ha); err != nil {
		t.Errorf("start after the cooldown and a step back: %v", err)
	}

	// A step back does not starve a client's request budget.
	f.m.Cancel()
	f.m.cooldown, f.m.starts, f.m.confirms = 0, NewBucket(time.Nanosecond, 100), NewBucket(time.Nanosecond, 100)
	g := f.pair(t)
	for range 30 {
		f.m.Authenticate(g.AccessToken)
	}
	f.clk.Step(-year)
	f.clk.Advance(time.Second)
	if _, err := f.m.Authenticate(g.AccessToken); err != nil {
		t.Errorf("a second after a step back: %v", err)
	}
}

func TestWrongClientCountsAsAWrongCode(t *testing.T) {
	f := newFixture(t)
	f.m.Enable(nil)
	st, _ := f.m.Start(ha)
	code := f.m.Prompt().Code
	if _, err := f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: "someone-else", Code: code}); !errors.Is(err, ErrWrongCode) {
		t.Errorf("another client with the right code: %v", err)
	}
	if _, err := f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: ha.ClientID, Code: "12345"}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("five digits: %v", err)
	}
	if _, err := f.m.Confirm(ConfirmRequest{PairingID: "not-the-id", ClientID: ha.ClientID, Code: code}); !errors.Is(err, ErrExpired) {
		t.Errorf("unknown pairing id: %v", err)
	}
}

func TestTimeLimits(t *testing.T) {
	f := newFixture(t)
	// The window closes by itself.
	f.m.Enable(nil)
	f.clk.Advance(DefaultWindow)
	if _, err := f.m.Start(ha); !errors.Is(err, ErrNotEnabled) {
		t.Errorf("start after the window: %v", err)
	}
	if f.m.Prompt() != nil {
		t.Error("closed window still on screen")
	}
	// A window is used up by one start.
	f.m.Enable(nil)
	st, err := f.m.Start(ha)
	if err != nil {
		t.Fatal(err)
	}
	code := f.m.Prompt().Code
	f.clk.Advance(DefaultLifetime - time.Second)
	if f.m.Prompt() == nil {
		t.Error("code gone before its time")
	}
	f.clk.Advance(time.Second)
	if f.m.Prompt() != nil {
		t.Error("expired code still on screen")
	}
	if _, err := f.m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: ha.ClientID, Code: code}); !errors.Is(err, ErrExpired) {
		t.Errorf("confirm after expiry: %v", err)
	}
	if _, err := f.m.Start(ha); !errors.Is(err, ErrNotEnabled) {
		t.Errorf("the window was reused: %v", err)
	}
}

func TestScopes(t *testing.T) {
	f := newFixture(t)
	g := f.pair(t, Read, Control, Notify, Power)
	if strings.Join(g.Scopes, ",") != "read,control,power" {
		t.Errorf("granted %v: want what was requested of what was allowed", g.Scopes)
	}
	f.m.Enable([]Scope{Notify})
	if _, err := f.m.Start(ha); !errors.Is(err, ErrNoScope) {
		t.Errorf("nothing in common: %v", err)
	}
	if _, err := ParseScopes([]string{"read", "root"}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("unknown scope: %v", err)
	}
	if s, _ := ParseScopes([]string{"power", "admin", "read", "read"}); strings.Join(Strings(s), ",") != "read,power" {
		t.Errorf("parsed %v", s)
	}
	// Pairing the same client again replaces its token.
	g2 := f.pair(t, Read)
	if _, err := f.m.Authenticate(g.AccessToken); !errors.Is(err, ErrBadToken) {
		t.Error("the first token of a client that paired again still works")
	}
	if c, err := f.m.Authenticate(g2.AccessToken); err != nil || len(c.Scopes) != 1 {
		t.Errorf("second token: %+v %v", c, err)
	}
	if n := len(f.m.Clients()); n != 1 {
		t.Errorf("%d clients, want 1", n)
	}
}

func TestBadRequestsChangeNothing(t *testing.T) {
	f := newFixture(t)
	f.m.Enable(nil)
	for _, r := range []StartRequest{
		{ClientName: "HA", ClientID: ""},
		{ClientName: "HA", ClientID: "has space"},
		{ClientName: "", ClientID: "x"},
		{ClientName: "bell\a", ClientID: "x"},
		{ClientName: "HA", ClientID: "x", RequestedScopes: []string{"everything"}},
	} {
		if _, err := f.m.Start(r); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%+v: %v", r, err)
		}
	}
	if s := f.m.Status(); !s.WindowOpen || s.Pending != nil {
		t.Errorf("a bad request changed the state: %+v", s)
	}
}

func TestRequestBudgetPerClient(t *testing.T) {
	f := newFixture(t)
	g := f.pair(t)
	n := 0
	var err error
	for ; n < 1000; n++ {
		if _, err = f.m.Authenticate(g.AccessToken); err != nil {
			break
		}
	}
	if n != 30 || fault.KindOf(err) != fault.Busy || fault.RetryAfterOf(err) <= 0 {
		t.Errorf("limited after %d requests with %v; want 30, then busy with a retry time", n, err)
	}
	f.clk.Advance(time.Second)
	for range 10 {
		if _, err := f.m.Authenticate(g.AccessToken); err != nil {
			t.Fatalf("a second later: %v", err)
		}
	}
}

func TestConfirmsAreLimitedAcrossPairings(t *testing.T) {
	f := newFixture(t)
	f.m.Enable(nil)
	st, _ := f.m.Start(ha)
	var err error
	for range 11 {
		_, err = f.m.Confirm(ConfirmRequest{PairingID: st.PairingID + "x", ClientID: ha.ClientID, Code: "123456"})
	}
	if fault.KindOf(err) != fault.Busy {
		t.Errorf("the 11th confirm in a moment: %v", err)
	}
}

func TestCorruptClientsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "clients.json")
	os.WriteFile(file, []byte("{not json"), 0o600)
	m, err := New(Config{File: file})
	if m == nil || err == nil {
		t.Fatalf("manager %v, error %v", m, err)
	}
	if data, _ := os.ReadFile(file); string(data) != "{not json" {
		t.Error("the corrupt file was touched")
	}
}

func BenchmarkAuthenticate(b *testing.B) {
	m, _ := New(Config{File: filepath.Join(b.TempDir(), "c.json"), RequestEvery: time.Nanosecond, RequestBurst: 1 << 30})
	var tok string
	for i := range 10 { // a household with ten clients
		m.Enable(nil)
		st, err := m.Start(StartRequest{ClientName: "c", ClientID: "client-" + string(rune('a'+i))})
		if err != nil {
			b.Fatal(err)
		}
		g, err := m.Confirm(ConfirmRequest{PairingID: st.PairingID, ClientID: "client-" + string(rune('a'+i)), Code: m.Prompt().Code})
		if err != nil {
			b.Fatal(err)
		}
		tok = g.AccessToken
		m.starts, m.confirms = NewBucket(time.Nanosecond, 100), NewBucket(time.Nanosecond, 100)
	}
	for b.Loop() {
		if _, err := m.Authenticate(tok); err != nil {
			b.Fatal(err)
		}
	}
}
