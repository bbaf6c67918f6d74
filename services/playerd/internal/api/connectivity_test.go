package api

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/playerd/internal/auth"
)

// fakeNet is netd as the API sees it; it records what reached it.
type fakeNet struct {
	mu       sync.Mutex
	connects []netapi.Connect
	forgets  []string
	country  string
}

func (f *fakeNet) Status(context.Context) (netapi.Status, error) {
	return netapi.Status{State: netapi.StateConnected, Interface: "wlan0", SSID: "home", Addresses: []string{}}, nil
}

func (f *fakeNet) Adapters(context.Context) (netapi.Adapters, error) {
	return netapi.Adapters{Adapters: []netapi.Adapter{{Interface: "wlan0", PSKOffload: true}}, SelectedInterface: "wlan0"}, nil
}

func (f *fakeNet) Scan(_ context.Context, iface string) (netapi.Scan, error) {
	if iface == "wlan9" {
		return netapi.Scan{}, fault.New(fault.Conflict, "no enabled and ready Wi-Fi adapter found")
	}
	return netapi.Scan{Interface: "wlan0", Networks: []netapi.Network{{SSID: "home", SignalPercent: 80, Security: "wpa2"}}}, nil
}

func (f *fakeNet) Connect(_ context.Context, req netapi.Connect) (netapi.Connected, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connects = append(f.connects, req)
	if req.Password != "correct horse" {
		return netapi.Connected{}, fault.New(fault.Upstream, "could not join \"home\": wrong password, or the network is out of reach")
	}
	return netapi.Connected{Connected: true, SSID: req.SSID, Interface: "wlan0"}, nil
}

func (f *fakeNet) Known(context.Context) (netapi.Known, error) {
	return netapi.Known{Networks: []netapi.KnownNetwork{{SSID: "home"}}}, nil
}

func (f *fakeNet) Forget(_ context.Context, ssid string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgets = append(f.forgets, ssid)
	return nil
}

func (f *fakeNet) SetCountry(_ context.Context, c string) (netapi.Country, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.country = c
	return netapi.Country{Country: c}, nil
}

var connectivityRoutes = []struct{ method, path, body string }{
	{"GET", "/api/connectivity/wifi/status", ""},
	{"GET", "/api/connectivity/wifi/adapters", ""},
	{"GET", "/api/connectivity/wifi", ""},
	{"GET", "/api/connectivity/wifi/networks", ""},
	{"POST", "/api/connectivity/wifi/connect", `{"ssid":"home","password":"correct horse"}`},
	{"POST", "/api/connectivity/wifi/forget", `{"ssid":"home"}`},
	{"PUT", "/api/connectivity/wifi/country", `{"country":"DE"}`},
}

// Every Wi-Fi route: open from the box itself; from the network 409 while
// no password is set, 401 without a session once one is, and open with
// one. A refused request never reaches netd.
func TestConnectivityProtection(t *testing.T) {
	var m *auth.Manager
	n := &fakeNet{}
	b := newBox(t, func(d *Deps) { m = d.Auth; d.Net = n })
	check := func(remote, session string, want int) {
		t.Helper()
		for _, r := range connectivityRoutes {
			if code, body := b.send(remote, r.method, r.path, r.body, session); code != want {
				t.Errorf("%s %s from %s (session %v): %d %s, want %d", r.method, r.path, remote, session != "", code, body, want)
			}
		}
	}
	check(lan, "", 409)
	check(lan6, "", 409)
	if len(n.connects)+len(n.forgets) != 0 || n.country != "" {
		t.Fatalf("refused requests reached netd: %+v", n)
	}
	check(lo, "", 200)
	check(lo6, "", 200)
	if code, _ := b.send(lan, "PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`, ""); code != 200 {
		t.Fatalf("first password: %d", code)
	}
	check(lan, "", 401)
	s, err := m.Login(t.Context(), auth.CallerAt(lan).Addr, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	check(lan, s.Token, 200)
	check(lo, "", 200)
}

// netd's answers keep their kind; bad bodies stop in playerd.
func TestConnectivityErrors(t *testing.T) {
	n := &fakeNet{}
	b := newBox(t, func(d *Deps) { d.Net = n })
	for _, tc := range []struct {
		method, path, body string
		want               int
		text               string
	}{
		{"POST", "/api/connectivity/wifi/connect", `{"ssid":"home","password":"wrong passphrase"}`, 502, "wrong password"},
		{"POST", "/api/connectivity/wifi/connect", `{"ssid":"home","pasword":"x"}`, 400, "unknown field"},
		{"POST", "/api/connectivity/wifi/connect", `{"ssid":1}`, 400, "ssid"},
		{"GET", "/api/connectivity/wifi?interface=wlan9", "", 409, "no enabled and ready Wi-Fi adapter"},
		{"PUT", "/api/connectivity/wifi/country", `[]`, 400, "object"},
	} {
		if code, body := b.send(lo, tc.method, tc.path, tc.body, ""); code != tc.want || !strings.Contains(body, tc.text) {
			t.Errorf("%s %s %s: %d %s, want %d %q", tc.method, tc.path, tc.body, code, body, tc.want, tc.text)
		}
	}
	if len(n.connects) != 1 {
		t.Errorf("netd saw %d connects, want only the well-formed one", len(n.connects))
	}
	// Without netd the routes say so.
	b = newBox(t, nil)
	if code, body := b.send(lo, "GET", "/api/connectivity/wifi/status", "", ""); code != 503 || !strings.Contains(body, "network service is not configured") {
		t.Errorf("without netd: %d %s", code, body)
	}
}
