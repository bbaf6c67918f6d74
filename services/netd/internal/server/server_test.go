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
		{"PUT", "/mdns/services", `{"name":"x","type":"_x._tcp","port":1,"host":"evil"}`, 400, `known fields`},
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
