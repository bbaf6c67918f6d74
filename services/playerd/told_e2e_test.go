package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/library"
)

// toldCase is one mutating route of the API: the request that changes
// something, and the events (kind, or "kind data" with the exact JSON) a
// client of GET /api/events must be told. A route that changes nothing a
// screen or a client shows says why instead (exempt) and is not sent.
type toldCase struct {
	route  string        // "METHOD /template" as api.Routes lists it
	path   func() string // the concrete path; nil: the template
	ctype  string        // "": JSON
	body   func() []byte // nil: none
	status int
	want   []string
	exempt string
	// optional: a route another branch adds (it needs a case once it is
	// served, and may be missing until then).
	optional bool
	// then reads the answer, for the ids later cases use.
	then func(reply)
}

func str(s string) func() []byte { return func() []byte { return []byte(s) } }

// TestEveryAdminChangeIsTold sends every mutating route of the API (every
// POST, PUT, PATCH and DELETE that api.Routes lists) as the administrator
// of a running box, and waits for each change to reach an event stream and
// the screen: the stream must carry the event, and the screen must have
// taken it in and redrawn (display.Heard). A route without a case here
// fails the test, so a new admin change is either told or says why it
// changes nothing anyone shows.
func TestEveryAdminChangeIsTold(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3, 3}})
	rs := newRadioServer(t)
	netd := fakeNetd(t)
	started := make(chan *running, 1)
	b := startHABox(t, media, t.TempDir(), testClock(time.Now()), func(c *setup) {
		c.Net, c.allowLoopback = netd, true
		c.onStart = func(x *running) { started <- x }
	})
	defer b.stop()
	var box *running
	select {
	case box = <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the box did not start")
	}
	// A paired client to revoke, while the box has no password yet.
	b.pairHA(t)
	admin := &caller{t: t, base: b.base, hc: b.admin}
	const pw = "correct horse battery"
	admin.ok("PUT", "/api/admin/password", fmt.Sprintf(`{"new_password":%q}`, pw))
	admin.ok("POST", "/api/admin/login", fmt.Sprintf(`{"password":%q}`, pw))
	archive := admin.ok("GET", "/api/admin/backup", "").raw // restored below
	stream := openStream(t, b.base, "")
	stream.next(t) // the status

	folder := library.ID("Hoerspiele/Folge A")
	var station, podcast string
	id := func(to *string) func(reply) {
		return func(r reply) {
			if *to, _ = r.body["id"].(string); *to == "" {
				t.Fatalf("no id in %s", r.raw)
			}
		}
	}
	at := func(prefix string, id *string, suffix string) func() string {
		return func() string { return prefix + *id + suffix }
	}
	fixed := func(p string) func() string { return func() string { return p } }
	upType, upBody := multipartOf(t, part{"file", "Kapitel 3.wav", tone(0.5)})
	restoreType, restoreBody := multipartOf(t, part{"backup", "backup.zip", archive})
	const (
		catalogLibrary = `catalog {"source":"library"}`
		catalogRadio   = `catalog {"source":"radio"}`
	)
	section := func(s string) string { return `settings {"sections":["` + s + `"]}` }
	nobody := "the password and sessions are the administrator's alone; nothing any screen or client shows changes"

	cases := []toldCase{
		{route: "POST /api/admin/login", exempt: nobody},
		{route: "POST /api/admin/logout", exempt: nobody},
		{route: "PUT /api/admin/password", exempt: nobody},
		{route: "POST /api/admin/system/power", exempt: "switches the box off or restarts it: the screen and every stream go with it"},
		{route: "POST /api/speak", exempt: "an announcement plays through the player, whose speech events tell it (the test box has no speech program)"},
		{route: "POST /api/connectivity/wifi/connect", exempt: "netd's state, not the core's: the screen asks netd itself"},
		{route: "POST /api/connectivity/wifi/forget", exempt: "netd's state, not the core's: the screen asks netd itself"},
		{route: "PUT /api/connectivity/wifi/country", exempt: "netd's state, not the core's: the screen asks netd itself"},
		{route: "POST /api/admin/cards/learn", exempt: "learning is the admin page's own wait for the next card (it long-polls GET /api/admin/cards/learn); no mapping changes"},
		{route: "DELETE /api/admin/cards/learn", exempt: "ends the admin page's wait for a card; no mapping changes"},
		{route: "DELETE /api/admin/cards/unknown/{id}", exempt: "the unknown cards are a record of reads the admin page asks for, not configuration; no screen shows them"},
		// issue 34 item 9 (branch licence): a restart of the screen changes
		// no state; it redraws everything from scratch.
		{route: "POST /api/admin/ui/restart", optional: true, exempt: "re-initialises the screen and touch: no state changes, the screen redraws whole"},

		{route: "POST /api/command", body: str(`{"action":"volume","value":42}`), status: 200, want: []string{"volume"}},
		{route: "POST /api/message", body: str(`{"message":"Gute Nacht","duration_ms":30000}`), status: 200, want: []string{"message"}},
		{route: "PUT /api/admin/settings", body: str(`{"audio":{"max_volume":70}}`), status: 200, want: []string{section("audio")}},
		{route: "PUT /api/admin/navigation", status: 200, want: []string{section("navigation")},
			body: str(`{"categories":[{"id":"stories","labels":{"de":"Geschichten"},"rows":[{"id":"a","provider":"local-library","source_ref":"Hoerspiele"}]}]}`)},
		// Before the changes of the media directory, whose own scans end
		// with the same event.
		{route: "POST /api/admin/library/rescan", body: str(`{}`), status: 200, want: []string{"library"}},
		{route: "POST /api/admin/library/folders", body: str(`{"name":"Musik"}`), status: 201, want: []string{catalogLibrary}},
		{route: "PATCH /api/admin/library/folders/{id}", path: fixed("/api/admin/library/folders/" + library.ID("Musik")),
			body: str(`{"name":"Lieder"}`), status: 200, want: []string{catalogLibrary}},
		{route: "DELETE /api/admin/library/folders/{id}", path: fixed("/api/admin/library/folders/" + library.ID("Lieder")),
			status: 200, want: []string{catalogLibrary}},
		{route: "POST /api/admin/library/folders/{id}/files", path: fixed("/api/admin/library/folders/" + folder + "/files"),
			ctype: upType, body: func() []byte { return upBody }, status: 201, want: []string{catalogLibrary}},
		{route: "PUT /api/admin/library/folders/{id}/cover", path: fixed("/api/admin/library/folders/" + folder + "/cover"),
			ctype: "image/png", body: func() []byte { return pngOf(16, 16) }, status: 200, want: []string{catalogLibrary}},
		{route: "PUT /api/admin/library/folders/{id}/mode", path: fixed("/api/admin/library/folders/" + folder + "/mode"),
			body: str(`{"mode":"shuffle"}`), status: 200, want: []string{section("folder_modes")}},
		{route: "POST /api/admin/stations", body: func() []byte { return []byte(`{"name":"Kinderfunk","url":"` + rs.URL + `/kids"}`) },
			status: 201, want: []string{catalogRadio}, then: id(&station)},
		{route: "PUT /api/admin/stations/{id}", path: at("/api/admin/stations/", &station, ""),
			body: func() []byte { return []byte(`{"name":"Kinderfunk 2","url":"` + rs.URL + `/kids"}`) }, status: 200, want: []string{catalogRadio}},
		{route: "DELETE /api/admin/stations/{id}", path: at("/api/admin/stations/", &station, ""), status: 200, want: []string{catalogRadio}},
		{route: "POST /api/admin/podcasts", body: func() []byte { return []byte(`{"url":"` + rs.URL + `/feed.xml"}`) },
			status: 201, want: []string{catalogRadio}, then: id(&podcast)},
		{route: "POST /api/admin/podcasts/{id}/refresh", path: at("/api/admin/podcasts/", &podcast, "/refresh"), status: 200, want: []string{catalogRadio}},
		{route: "PUT /api/admin/podcasts/{id}", path: at("/api/admin/podcasts/", &podcast, ""),
			body: func() []byte { return []byte(`{"url":"` + rs.URL + `/feed.xml","name":"Gute Nacht"}`) }, status: 200, want: []string{catalogRadio}},
		{route: "DELETE /api/admin/podcasts/{id}", path: at("/api/admin/podcasts/", &podcast, ""), status: 200, want: []string{catalogRadio}},
		{route: "PUT /api/admin/parental", body: str(`{"daily_limit_minutes":{"mon":90,"tue":90,"wed":90,"thu":90,"fri":90,"sat":90,"sun":90}}`),
			status: 200, want: []string{section("parental")}},
		{route: "PUT /api/admin/cards", body: str(`{"same_card":"toggle_pause","sounds":false}`), status: 200, want: []string{section("cards")}},
		{route: "PUT /api/admin/cards/{id}", path: fixed("/api/admin/cards/0004921380"),
			body: str(`{"action":"folder","folder_id":"` + folder + `","name":"Bobo"}`), status: 200, want: []string{section("cards")}},
		{route: "DELETE /api/admin/cards/{id}", path: fixed("/api/admin/cards/0004921380"), status: 200, want: []string{section("cards")}},
		{route: "PUT /api/admin/input", body: str(`{"gpio":{"buttons":[{"line":17,"action":"toggle","long_action":"power_off"}]}}`),
			status: 200, want: []string{section("input")}},
		{route: "POST /api/admin/ha/pairing", body: str(`{"scopes":["read"]}`), status: 200, want: []string{section("home_automation")}},
		{route: "DELETE /api/admin/ha/pairing", status: 200, want: []string{section("home_automation")}},
		{route: "DELETE /api/admin/ha/clients/{client_id}", path: fixed("/api/admin/ha/clients/" + homeAssistant.id),
			status: 200, want: []string{section("home_automation")}},
		// The backup taken before any of the above: its settings differ
		// from the box's now, and every file it holds is put in force.
		{route: "POST /api/admin/restore", ctype: restoreType, body: func() []byte { return restoreBody }, status: 200,
			want: []string{section("audio"), section("navigation"), section("cards"), section("input"), section("parental"), section("folder_modes")}},
	}

	// Every mutating route has exactly one case, and every case a route.
	served := map[string]bool{}
	for _, r := range api.Routes() {
		if m, _, _ := strings.Cut(r, " "); m != http.MethodGet {
			served[r] = true
		}
	}
	byRoute := map[string]bool{}
	for _, c := range cases {
		if byRoute[c.route] {
			t.Errorf("%s has two cases", c.route)
		}
		byRoute[c.route] = true
		if !served[c.route] && !c.optional {
			t.Errorf("%s: a case for a route the API does not serve", c.route)
		}
	}
	for r := range served {
		if !byRoute[r] {
			t.Errorf("%s changes something: add a case with the events it must tell, or the reason it changes nothing anyone shows", r)
		}
	}

	for _, c := range cases {
		if c.exempt != "" || !served[c.route] {
			continue
		}
		method, path, _ := strings.Cut(c.route, " ")
		if c.path != nil {
			path = c.path()
		}
		var body []byte
		if c.body != nil {
			body = c.body()
		}
		var header []string
		if c.ctype != "" {
			header = []string{"Content-Type", c.ctype}
		}
		stream.skip()
		r := admin.send(method, path, body, header...)
		if r.code != c.status {
			t.Fatalf("%s: %d %s, want %d", c.route, r.code, r.raw, c.status)
		}
		if c.then != nil {
			c.then(r)
		}
		last := stream.told(t, c.route, c.want)
		waitUntil(t, c.route+": the screen taking in event "+strconv.FormatUint(last, 10), 20*time.Second, func() bool {
			return box.display.Heard() >= last
		})
	}
	admin.ok("POST", "/api/admin/logout", "")
}

// skip drops the events already received: what an earlier change was told
// is not this one's.
func (s *sseClient) skip() {
	for {
		select {
		case <-s.c:
		default:
			return
		}
	}
}

// told reads events until each of want ("kind" or "kind data") came, and
// returns the id of the last it needed.
func (s *sseClient) told(t *testing.T, what string, want []string) uint64 {
	t.Helper()
	left := slices.Clone(want)
	var last uint64
	var seen []string
	deadline := time.After(20 * time.Second)
	for len(left) > 0 {
		var ev sseEvent
		var ok bool
		select {
		case ev, ok = <-s.c:
			if !ok {
				t.Fatalf("%s: the stream ended", what)
			}
		case <-deadline:
			t.Fatalf("%s: no %q within 20 s; the stream had %q", what, left, seen)
		}
		seen = append(seen, ev.Event+" "+ev.Data)
		i := slices.IndexFunc(left, func(w string) bool {
			kind, data, _ := strings.Cut(w, " ")
			return ev.Event == kind && (data == "" || compactJSON(data) == compactJSON(ev.Data))
		})
		if i < 0 {
			continue
		}
		left = slices.Delete(left, i, i+1)
		id, err := strconv.ParseUint(ev.ID, 10, 64)
		if err != nil {
			t.Fatalf("%s: event id %q", what, ev.ID)
		}
		last = max(last, id)
	}
	return last
}

func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}
