package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/fetch"
)

// The box never fetches from itself, through the API as the admin page
// uses it, with the machine's real addresses (the kernel's list, asked on
// every check): a station, a station cover or a podcast at one of the box's
// own non-loopback addresses is refused when saved, even with loopback
// allowed as in tests; a station that redirects there is refused on
// connecting, and that address never sees a connection.
func TestNeverFetchesFromItself(t *testing.T) {
	var own []netip.Addr
	all, err := fetch.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range all {
		if !a.IsLoopback() && !a.IsLinkLocalUnicast() {
			own = append(own, a)
		}
	}
	if len(own) == 0 {
		t.Skip("this machine has no non-loopback address")
	}
	// What the box would reach at its own address: a stand-in that counts.
	var hits atomic.Int64
	ln, err := net.Listen("tcp", netip.AddrPortFrom(own[0], 0).String())
	if err != nil {
		t.Fatal(err)
	}
	self := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "audio/mpeg")
		io.WriteString(w, strings.Repeat("\x00", 4096))
	}))
	self.Listener = ln
	self.Start()
	defer self.Close()
	selfURL := "http://" + ln.Addr().String() + "/api/admin/backup"
	detour := httptest.NewServer(http.RedirectHandler(selfURL, http.StatusFound))
	defer detour.Close()

	media, data := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}}), t.TempDir()
	base, stop := startBoxWith(t, media, data, func(c *setup) {
		c.allowLoopback = true
		c.streamReadTimeout = time.Second
	})
	defer stop()
	c := client(t, base)

	for _, ip := range own {
		u := "http://" + netip.AddrPortFrom(ip, 8090).String() + "/api/admin/backup"
		for _, tc := range []struct{ path, body, field string }{
			{"/api/admin/stations", fmt.Sprintf(`{"name":"Box","url":%q}`, u), "url"},
			{"/api/admin/stations", fmt.Sprintf(`{"name":"Box","url":%q,"cover_url":%q}`, detour.URL, u), "cover_url"},
			{"/api/admin/podcasts", fmt.Sprintf(`{"url":%q}`, u), "url"},
		} {
			r := c.do("POST", tc.path, tc.body)
			if want := tc.field + ": address not allowed: " + ip.String() + " is the box itself"; r.code != http.StatusBadRequest || r.err() != want {
				t.Errorf("POST %s %s: %d %s, want 400 %q", tc.path, tc.body, r.code, r.raw, want)
			}
		}
	}
	if n := len(c.do("GET", "/api/admin/stations", "").body["stations"].([]any)); n != 0 {
		t.Fatalf("%d stations saved, want none", n)
	}

	// Saved through a name or a detour, the address is refused on
	// connecting.
	c.do("POST", "/api/admin/stations", fmt.Sprintf(`{"name":"Umweg","url":%q}`, detour.URL+"/live")).want(t, "a station on loopback (tests)", 201, "")
	umweg := folderOfKind(t, base, "radio", "Umweg")
	post(t, base, `{"action":"folder","folder_id":"`+umweg["id"].(string)+`"}`)
	var st map[string]any
	waitUntil(t, "the refusal reported", 30*time.Second, func() bool {
		st = statusOf(t, base)
		return st["state"] == "error"
	})
	if msg, _ := st["error"].(string); !strings.Contains(msg, "not allowed") {
		t.Errorf("status error %q, want the address refused", msg)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the box's own address was reached %d times", n)
	}
}
