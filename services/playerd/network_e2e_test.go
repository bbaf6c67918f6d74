package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/netapi"
)

// fakeNetd serves canned netd answers on a Unix socket, the way netd's own
// server shapes them (package netapi); netd itself is tested in
// services/netd and, with real radios, in its VM test.
func fakeNetd(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "netd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "netd.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	dbm, pct, ip, gw := -51, 84, "192.168.1.23", "192.168.1.1"
	status := netapi.Status{State: netapi.StateConnected, Interface: "wlan0", SSID: "home", BSSID: "02:aa:00:00:00:01",
		SignalDBM: &dbm, SignalPercent: &pct, Addresses: []string{"192.168.1.23/24"}, IPv4: &ip, Gateway: &gw, Country: "DE", KnownNetworks: 1}
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { reply(w, 200, status) })
	mux.HandleFunc("GET /adapters", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, netapi.Adapters{Adapters: []netapi.Adapter{{Interface: "wlan0", MAC: "02:00:00:00:00:01", Driver: "brcmfmac",
			State: "connected", Managed: true, Usable: true, Enabled: true, Preferred: true, Selected: true, Active: true, PSKOffload: true}},
			PrimaryInterface: "wlan0", SelectedInterface: "wlan0"})
	})
	mux.HandleFunc("GET /scan", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("interface") == "wlan9" {
			reply(w, 409, netapi.Error{Error: "no enabled and ready Wi-Fi adapter found", Kind: "conflict"})
			return
		}
		reply(w, 200, netapi.Scan{Interface: "wlan0", Networks: []netapi.Network{
			{SSID: "home", SignalPercent: 84, SignalDBM: -51, Security: "wpa2", Connected: true, Known: true, Interface: "wlan0"}}})
	})
	mux.HandleFunc("POST /connect", func(w http.ResponseWriter, r *http.Request) {
		var c netapi.Connect
		_ = json.NewDecoder(r.Body).Decode(&c)
		if c.Password != "correct horse" {
			reply(w, 502, netapi.Error{Error: `could not join "home": wrong password, or the network is out of reach`, Kind: "upstream"})
			return
		}
		reply(w, 200, netapi.Connected{Connected: true, SSID: c.SSID, Interface: "wlan0"})
	})
	mux.HandleFunc("GET /networks", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, netapi.Known{Networks: []netapi.KnownNetwork{{SSID: "home", Priority: 0}}})
	})
	mux.HandleFunc("POST /forget", func(w http.ResponseWriter, r *http.Request) {
		var f netapi.Forget
		_ = json.NewDecoder(r.Body).Decode(&f)
		if f.SSID != "home" {
			reply(w, 404, netapi.Error{Error: "no known network of that name", Kind: "not found"})
			return
		}
		reply(w, 200, map[string]bool{"forgotten": true})
	})
	mux.HandleFunc("PUT /country", func(w http.ResponseWriter, r *http.Request) {
		var c netapi.Country
		_ = json.NewDecoder(r.Body).Decode(&c)
		reply(w, 200, c)
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return sock
}

// With netd, /api/system tells the link netd made, and the connectivity
// routes pass netd's answers and error kinds on.
func TestNetworkThroughNetd(t *testing.T) {
	sock := fakeNetd(t)
	base, stop := startBoxWith(t, t.TempDir(), t.TempDir(), func(c *setup) { c.Net = sock })
	defer stop()
	sys := getJSON[map[string]any](t, base+"/api/system")
	wifi := sys["wifi"].(map[string]any)
	if sys["online"] != true || wifi["connected"] != true || wifi["interface"] != "wlan0" || wifi["signal_dbm"] != -51.0 ||
		wifi["quality_percent"] != 84.0 || wifi["ipv4"] != "192.168.1.23" {
		t.Errorf("/api/system %v", sys)
	}
	resp, err := http.Post(base+"/api/connectivity/wifi/connect", "application/json", strings.NewReader(`{"ssid":"home","password":"wrong passphrase"}`))
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 502 || !strings.Contains(e["error"], "wrong password") {
		t.Errorf("wrong passphrase: %d %v", resp.StatusCode, e)
	}
}
