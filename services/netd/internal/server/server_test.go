package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/netd/internal/mdns"
)

func do(t *testing.T, h http.Handler, method, path, body string) (int, string) {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

const mupibox = `{"name":"storybox","type":"_mupibox._tcp","port":8443,"text":{"api_version":"1","device_id":"abc"}}`

// playerd's announcement through netd's socket, as netclient sends it.
func TestMDNSRoutes(t *testing.T) {
	adv := &mdns.Advertiser{Host: "storybox", Services: []mdns.Service{{Name: "storybox", Type: "_http._tcp", Port: 8090}}}
	h := NewHandler(nil, adv, nil)
	if code, body := do(t, h, "PUT", "/mdns/services", mupibox); code != 200 || !strings.Contains(body, `"device_id":"abc"`) {
		t.Fatalf("announce: %d %s", code, body)
	}
	code, body := do(t, h, "GET", "/mdns", "")
	var st netapi.MDNS
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != 200 {
		t.Fatalf("state: %d %s %v", code, body, err)
	}
	if !st.Enabled || st.Host != "storybox.local" || len(st.Services) != 2 || st.Services[1].Text["device_id"] != "abc" {
		t.Errorf("state %+v", st)
	}
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"PUT", "/mdns/services", `{"name":"x","type":"_http._tcp","port":1}`, 409, `"kind":"conflict"`},
		{"PUT", "/mdns/services", `{"name":"x","type":"http","port":1}`, 400, `"kind":"invalid"`},
		{"PUT", "/mdns/services", `{"name":"x","type":"_x._tcp","port":1,"host":"evil"}`, 400, `unknown field \"host\"`},
		{"DELETE", "/mdns/services/_mupibox._tcp", "", 200, `{"withdrawn":true}`},
		{"DELETE", "/mdns/services/_mupibox._tcp", "", 404, `"kind":"not found"`},
	} {
		if code, body := do(t, h, tc.method, tc.path, tc.body); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s %s: %d %s", tc.method, tc.path, tc.body, code, body)
		}
	}
	// With -mdns=false nothing is announced, and a caller hears why.
	off := NewHandler(nil, nil, nil)
	if code, body := do(t, off, "PUT", "/mdns/services", mupibox); code != 409 || !strings.Contains(body, "-mdns=false") {
		t.Errorf("announce with mDNS off: %d %s", code, body)
	}
	if code, body := do(t, off, "GET", "/mdns", ""); code != 200 || body != `{"enabled":false,"host":"","addresses":[],"services":[]}`+"\n" {
		t.Errorf("state with mDNS off: %d %s", code, body)
	}
}

// Every answer on the socket is JSON, the mux's own 404 and 405 and an
// oversized body's 413 included; a passphrase in a refused body is never
// told back.
func TestRefusalsAreJSON(t *testing.T) {
	h := NewHandler(nil, nil, nil)
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/nothing", "", 404, `{"error":"no such endpoint: /nothing","kind":"not found"}`},
		{"DELETE", "/status", "", 405, `{"error":"method DELETE is not allowed on /status","kind":"invalid"}`},
		{"POST", "/connect", `{"ssid":"home","password":"` + strings.Repeat("p", 64<<10) + `"}`, 413, `{"error":"body is larger than 65536 bytes","kind":"too large"}`},
		{"POST", "/connect", `{"ssid":"home","password":hunter2}`, 400, `{"error":"invalid JSON at byte 27","kind":"invalid"}`},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.code || strings.TrimSpace(w.Body.String()) != tc.want || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: %d %v %s", tc.method, tc.path, w.Code, w.Header(), w.Body)
		}
	}
}
