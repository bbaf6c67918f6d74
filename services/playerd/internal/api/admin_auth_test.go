package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/auth"
)

// send is box.call with a chosen client address and session.
func (b *box) send(remote, method, path, body, session string) (int, string) {
	b.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "box:8090"
	req.RemoteAddr = remote
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: auth.CookieName, Value: session})
	}
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

const (
	lan  = "192.0.2.7:40000"
	lan6 = "[2001:db8::7]:40000"
	lo   = "127.0.0.1:40000"
	lo6  = "[::1]:40000"
)

// The protection rules by caller: what the e2e tests show through a real
// socket, here for every kind of address.
func TestProtectionRules(t *testing.T) {
	var m *auth.Manager
	b := newBox(t, func(d *Deps) { m = d.Auth })

	for _, remote := range []string{lan, lan6} {
		if code, body := b.send(remote, "GET", "/api/connectivity/wifi", "", ""); code != 409 || !strings.Contains(body, "administrator password not set") {
			t.Errorf("network area from %s without a password: %d %s", remote, code, body)
		}
		if code, _ := b.send(remote, "POST", "/api/admin/library/rescan", "{}", ""); code != 200 {
			t.Errorf("admin area from %s without a password: %d", remote, code)
		}
	}
	for _, local := range []string{lo, lo6} {
		if code, _ := b.send(local, "GET", "/api/connectivity/future", "", ""); code != 404 {
			t.Errorf("network area from the box (%s): %d, want the router's 404", local, code)
		}
	}

	code, _ := b.send(lan, "PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`, "")
	if code != 200 {
		t.Fatalf("first password: %d", code)
	}
	s, err := m.Login(t.Context(), auth.CallerAt(lan).Addr, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		remote, method, path, session string
		want                          int
	}{
		{lan, "GET", "/api/connectivity/wifi", "", 401},
		{lan6, "GET", "/api/connectivity", "", 401},
		{lan, "GET", "/api/connectivity/future", s.Token, 404},
		{lo, "GET", "/api/connectivity/future", "", 404},
		{lan, "POST", "/api/admin/library/rescan", "", 401},
		{lo, "POST", "/api/admin/library/rescan", "", 401}, // the admin area wants a login from the box too
		{lan, "HEAD", "/api/admin/auth", "", 200},
		{lan, "GET", "/api/admin", "", 401},
		{lan, "GET", "/api/admin/", "", 401},
		{lan, "GET", "/api/admin/future/route", "", 401},
		{lan, "POST", "/api/admin//library/rescan", "", 401},
		{lan, "POST", "/api/admin/login/../library/rescan", "", 401},
		{lan, "POST", "/api/admin/library/rescan", s.Token, 200},
		{lan, "GET", "/api/administrator", "", 404}, // a prefix of a name is not the area
		{lan, "GET", "/api/status", "", 200},
	} {
		body := ""
		if tc.method == "POST" {
			body = "{}"
		}
		if code, resp := b.send(tc.remote, tc.method, tc.path, body, tc.session); code != tc.want {
			t.Errorf("%s %s from %s (session %v): %d %s, want %d", tc.method, tc.path, tc.remote, tc.session != "", code, resp, tc.want)
		}
	}
}

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"": "/", "api/admin": "/api/admin", "/api/admin/": "/api/admin/", "/api//admin/x": "/api/admin/x",
		"/api/admin/../status": "/api/status", "/api/./admin/.": "/api/admin", "/../api/admin/x/": "/api/admin/x/",
	} {
		if got := cleanPath(in); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", in, got, want)
		}
	}
}
