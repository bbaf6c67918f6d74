package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/hat"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/metrics"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/speech"
	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/system"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

type fakeHat struct {
	raw json.RawMessage
	err error
}

func (f fakeHat) HatStatus(context.Context) (json.RawMessage, error) { return f.raw, f.err }

type fakeSpeaker struct {
	got  []string
	slow bool  // rendering outlasts the wait
	err  error // what the speech service refuses with
}

func (f *fakeSpeaker) Speak(_ context.Context, text, lang string) (bool, error) {
	if f.err != nil {
		return false, f.err
	}
	f.got = append(f.got, text+"|"+lang)
	return !f.slow, nil
}

type box struct {
	t       *testing.T
	srv     http.Handler
	p       *player.Player
	lib     *library.Library
	media   string
	speaker *fakeSpeaker
}

// newBox runs a real player on a null sink over a real library.
func newBox(t *testing.T, deps func(*Deps)) *box {
	t.Helper()
	media := t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{
		"Hoerspiele/Folge A": {3, 3},
		"Musik/Lieder":       {2},
	}); err != nil {
		t.Fatal(err)
	}
	lib := library.New(media, "", nil)
	if _, err := lib.Scan(); err != nil {
		t.Fatal(err)
	}
	p := player.New(player.Config{
		Open:    func(rate int) (output.Sink, error) { return output.NewNull(rate), nil },
		Catalog: lib, MaxVolume: 70, StartVolume: 30,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	b := &box{t: t, p: p, lib: lib, media: media, speaker: &fakeSpeaker{}}
	d := Deps{
		Version: "test", Player: p, Library: lib,
		Views: Views{
			Home: func() home.Home {
				return home.Build(home.Defaults(lib.TopLevel()), lib.Folders(), map[string]state.ResumePoint{}, "de")
			},
			Info:    func() map[string]any { return map[string]any{"version": "test", "max_volume": 70} },
			Metrics: func() metrics.Snapshot { return metrics.Snapshot{} },
			System:  func() system.Status { return system.Status{Online: true} },
		},
	}
	d.Auth, d.Hosts = testAuth(t)
	if deps != nil {
		deps(&d)
	}
	b.srv = NewHandler(d)
	return b
}

// testParams make argon2 cheap: the tests exercise the logic, the
// benchmark in package auth the cost.
var testParams = auth.Params{Memory: 64, Time: 1, Threads: 1}

// testAuth is a box without a password whose host name is "box", the name
// the tests send in Host.
func testAuth(t testing.TB) (*auth.Manager, *auth.Hosts) {
	m, err := auth.New(auth.Config{Dir: t.TempDir(), Params: testParams})
	if err != nil {
		t.Fatal(err)
	}
	return m, auth.NewHosts("box", nil)
}

// call sends a request; body "" means none. It returns status and decoded JSON.
func (b *box) call(method, path, body string, header ...string) (int, map[string]any, http.Header) {
	b.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	req.Host = "box:8090"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	var out map[string]any
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			b.t.Fatalf("%s %s: invalid JSON %q", method, path, rec.Body.String())
		}
		out, _ = v.(map[string]any)
	}
	return rec.Code, out, rec.Header()
}

func (b *box) folderID(name string) string {
	for _, f := range b.lib.Folders() {
		if f.Name == name {
			return f.ID
		}
	}
	b.t.Fatalf("no folder %q", name)
	return ""
}

func TestStatusQueries(t *testing.T) {
	b := newBox(t, nil)
	for _, path := range []string{"/api/health", "/api/status", "/api/info", "/api/home", "/api/system/metrics"} {
		code, body, h := b.call("GET", path, "")
		if code != 200 || body == nil {
			t.Errorf("GET %s: %d %v", path, code, body)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: missing security headers", path)
		}
	}
	_, health, _ := b.call("GET", "/api/health", "")
	if health["status"] != "ok" || health["version"] != "test" {
		t.Errorf("health %v", health)
	}
	_, st, _ := b.call("GET", "/api/status", "")
	for _, k := range []string{"state", "folder", "folder_id", "queue", "index", "position", "duration", "volume", "max_volume", "now_playing"} {
		if _, ok := st[k]; !ok {
			t.Errorf("status lacks %q", k)
		}
	}
	if st["index"] != -1.0 || st["state"] != "stopped" || st["now_playing"] != nil {
		t.Errorf("idle status %v", st)
	}
}

func TestLibraryAndCover(t *testing.T) {
	b := newBox(t, nil)
	req := httptest.NewRequest("GET", "/api/library", nil)
	req.Host = "box:8090"
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	var folders []library.Folder
	if err := json.Unmarshal(rec.Body.Bytes(), &folders); err != nil || len(folders) != 2 {
		t.Fatalf("library: %v %s", err, rec.Body)
	}
	if folders[0].Relative != "Hoerspiele/Folge A" || len(folders[0].Tracks) != 2 || folders[0].Tracks[0].Title != "Folge 1" {
		t.Errorf("library %+v", folders[0])
	}
	if strings.Contains(rec.Body.String(), b.media) {
		t.Error("the library leaks file system paths")
	}
	code, body, _ := b.call("GET", "/api/cover/"+folders[0].ID, "")
	if code != 404 || body["error"] == "" {
		t.Errorf("cover of a folder without one: %d %v", code, body)
	}
}

func TestPlayAFolderThroughTheAPI(t *testing.T) {
	b := newBox(t, nil)
	id := b.folderID("Folge A")
	code, st, _ := b.call("POST", "/api/command", `{"action":"folder","folder_id":"`+id+`"}`)
	if code != 200 || st["state"] != "playing" || st["folder_id"] != id || st["folder"] != "Folge A" {
		t.Fatalf("folder: %d %v", code, st)
	}
	queue := st["queue"].([]any)
	if len(queue) != 2 || queue[0].(map[string]any)["title"] != "Folge 1" || queue[0].(map[string]any)["id"] == "" {
		t.Errorf("queue %v", queue)
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.p.Status().Position < 0.3 {
		if time.Now().After(deadline) {
			t.Fatal("position does not advance")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, st, _ = b.call("POST", "/api/command", `{"action":"volume","value":95}`); st["volume"] != 70.0 {
		t.Errorf("volume above the maximum: %v", st["volume"])
	}
	if _, st, _ = b.call("POST", "/api/command", `{"action":"pause"}`); st["state"] != "paused" {
		t.Errorf("pause: %v", st["state"])
	}
	if _, st, _ = b.call("POST", "/api/command", `{"action":"seek","value":1.5}`); st["position"] != 1.5 {
		t.Errorf("seek: %v", st["position"])
	}
	if _, st, _ = b.call("POST", "/api/command", `{"action":"next"}`); st["index"] != 1.0 {
		t.Errorf("next: %v", st["index"])
	}
}

func TestCommandErrors(t *testing.T) {
	b := newBox(t, nil)
	cases := []struct {
		body string
		code int
		msg  string
	}{
		{`{"action":"play"}`, 409, "queue is empty"},
		{`{"action":"toggle"}`, 409, "queue is empty"},
		{`{"action":"folder","folder_id":"nope"}`, 400, `unknown or empty folder "nope"`},
		{`{"action":"resume","folder_id":"` + b.folderID("Lieder") + `","item_index":5}`, 400, "item_index 5 is outside 0..0"},
		{`{"action":"resume","folder_id":"x","item_index":1.5}`, 400, `field "item_index" must be an integer`},
		{`{"action":"volume","value":"loud"}`, 400, `field "value" must be a number`},
		{`{"action":"volume","value":NaN}`, 400, "invalid JSON"},
		{`{"action":"volume","value":1e999}`, 400, `field "value"`},
		{`{"action":"volume","value":5,"colour":"red"}`, 400, `unknown field "colour"`},
		{`{"action":"stop"} {"action":"play"}`, 400, "expected one JSON object"},
		{`[{"action":"stop"}]`, 400, "body must be one JSON object"},
		{`{"action":`, 400, "JSON"},
		{`{"action":"jump"}`, 400, `unknown action "jump"`},
	}
	for _, c := range cases {
		code, body, _ := b.call("POST", "/api/command", c.body)
		if code != c.code || !strings.Contains(body["error"].(string), c.msg) {
			t.Errorf("%s: %d %v, want %d %q", c.body, code, body, c.code, c.msg)
		}
	}
	if st := b.p.Status(); st.Volume != 30 || st.State != player.Stopped {
		t.Errorf("refused requests changed the player: %+v", st)
	}
}

func TestBodyRules(t *testing.T) {
	b := newBox(t, nil)
	code, body, _ := b.call("POST", "/api/command", `{"action":"stop"}`, "Content-Type", "text/plain")
	if code != 415 || body["error"] == nil {
		t.Errorf("text/plain: %d %v", code, body)
	}
	if code, _, _ := b.call("POST", "/api/command", `{"action":"stop"}`, "Content-Type", "application/json; charset=utf-8"); code != 200 {
		t.Errorf("JSON with charset: %d", code)
	}
	big := `{"action":"stop","folder_id":"` + strings.Repeat("x", MaxBody) + `"}`
	if code, body, _ := b.call("POST", "/api/command", big); code != 413 || body["error"] != fmt.Sprintf("body is larger than %d bytes", MaxBody) {
		t.Errorf("oversized body: %d", code)
	}
	if code, _, _ := b.call("POST", "/api/command", ""); code != 415 {
		t.Errorf("no body and no content type: %d", code)
	}
}

func TestUnknownPathsAndMethods(t *testing.T) {
	b := newBox(t, nil)
	for _, tc := range []struct {
		method, path string
		code         int
		msg          string
	}{
		{"GET", "/api/nothing", 404, "no such endpoint: /api/nothing"},
		{"GET", "/api/command", 405, "method GET is not allowed on /api/command"},
		{"DELETE", "/api/status", 405, "method DELETE is not allowed on /api/status"},
		{"GET", "/admin/nothing.js", 404, "no such endpoint: /admin/nothing.js"},
		{"POST", "/admin/", 405, "method POST is not allowed on /admin/"},
	} {
		code, body, _ := b.call(tc.method, tc.path, "")
		wantCode := map[int]string{404: "not_found", 405: "method_not_allowed"}[tc.code]
		if code != tc.code || body["error"] != tc.msg || body["code"] != wantCode || len(body) != 2 {
			t.Errorf("%s %s: %d %v, want %d {error: %q, code: %q}", tc.method, tc.path, code, body, tc.code, tc.msg, wantCode)
		}
	}
}

// Writes from another web site inside a browser are refused and change
// nothing; clients without an Origin pass.
func TestBrowserOriginProtection(t *testing.T) {
	b := newBox(t, nil)
	vol := `{"action":"volume","value":5}`
	for _, hdr := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "http://evil.example"},
		{"Origin", "https://box:8090"},
		{"Origin", "http://box:9999"},
		{"Origin", "null"},
	} {
		code, body, _ := b.call("POST", "/api/command", vol, hdr...)
		if code != 403 || body["error"] == nil {
			t.Errorf("%v: %d %v", hdr, code, body)
		}
	}
	if v := b.p.Status().Volume; v != 30 {
		t.Fatalf("a refused request changed the volume to %d", v)
	}
	for _, hdr := range [][]string{{"Origin", "http://box:8090"}, {"Sec-Fetch-Site", "same-origin"}, {}} {
		if code, _, _ := b.call("POST", "/api/command", vol, hdr...); code != 200 {
			t.Errorf("%v: %d", hdr, code)
		}
	}
	if code, _, _ := b.call("GET", "/api/status", "", "Sec-Fetch-Site", "cross-site"); code != 200 {
		t.Errorf("reads stay open: %d", code)
	}
}

func TestSpeakValidation(t *testing.T) {
	b := newBox(t, nil)
	for body, want := range map[string]string{
		`{}`:         "text is required",
		`{"text":5}`: `field "text" must be a string`,
	} {
		code, resp, _ := b.call("POST", "/api/speak", body)
		if code != 400 || !strings.Contains(resp["error"].(string), want) {
			t.Errorf("%.40s: %d %v", body, code, resp)
		}
	}
	if code, resp, _ := b.call("POST", "/api/speak", `{"text":"Hallo"}`); code != 503 || resp["error"] != "tts unavailable" {
		t.Errorf("without a voice: %d %v", code, resp)
	}
	s := &fakeSpeaker{}
	b = newBox(t, func(d *Deps) { d.Speaker = s })
	code, resp, _ := b.call("POST", "/api/speak", `{"text":"Abendessen ist fertig!","language":"de","source_type":"ha"}`)
	if code != 200 || resp["speaking"] != true || len(s.got) != 1 || s.got[0] != "Abendessen ist fertig!|de" {
		t.Errorf("speak: %d %v %v", code, resp, s.got)
	}
	s.slow = true
	if code, resp, _ := b.call("POST", "/api/speak", `{"text":"Lange Geschichte"}`); code != 202 || resp["speaking"] != false || resp["queued"] != true {
		t.Errorf("speech still rendering: %d %v, want 202 queued", code, resp)
	}
}

// The speech service's refusals reach the client with the status of their
// kind, a Retry-After where it has one, and no internal detail.
func TestSpeakRefusals(t *testing.T) {
	s := &fakeSpeaker{}
	b := newBox(t, func(d *Deps) { d.Speaker = s })
	for _, tc := range []struct {
		err        error
		code       int
		msg, retry string
	}{
		{speech.ErrEmpty, 400, "text is empty", ""},
		{fmt.Errorf("%w (8)", speech.ErrBusy), 429, "too many announcements waiting (8)", "5"},
		// The player's own announcement queue, as the speech service wraps it.
		{fmt.Errorf("play announcement: %w", fault.Retry(fault.Busy, 1500*time.Millisecond, "4 announcements are waiting")), 429, "play announcement: 4 announcements are waiting", "2"},
		// Every 503 says when to try again, a part that is down too.
		{fmt.Errorf("%w: /usr/lib/storybox-speak is not an executable file", speech.ErrUnavailable), 503, "no voice available", "1"},
		{fault.New(fault.Busy, "busy without a wait of its own"), 429, "busy without a wait of its own", "1"},
		{errors.New("render: exec /usr/lib/x: signal: killed"), 500, "speech failed", ""},
	} {
		s.err = tc.err
		code, resp, hdr := b.call("POST", "/api/speak", `{"text":"Hallo"}`)
		if code != tc.code || resp["error"] != tc.msg || hdr.Get("Retry-After") != tc.retry {
			t.Errorf("%v: %d %v Retry-After %q, want %d %q %q", tc.err, code, resp, hdr.Get("Retry-After"), tc.code, tc.msg, tc.retry)
		}
	}
}

func TestMessageValidation(t *testing.T) {
	b := newBox(t, nil)
	for body, want := range map[string]string{
		`{}`:                                              "message is required",
		`{"message":""}`:                                  "message is required",
		`{"message":"  "}`:                                "message is required",
		`{"message":"hi","duration_ms":30001}`:            "duration_ms must be between 0 and 30000",
		`{"message":"hi","duration_ms":-1}`:               "duration_ms must be between 0 and 30000",
		`{"message":"hi","duration_ms":1.5}`:              `field "duration_ms" must be an integer`,
		`{"message":"hi","title":7}`:                      `field "title" must be a string`,
		`{"message":"` + strings.Repeat("x", 1001) + `"}`: "message is too long (1001 characters, at most 1000)",
		`{"message":"hi","title":"` + strings.Repeat("x", 121) + `"}`: "title is too long (121 characters, at most 120)",
	} {
		code, resp, _ := b.call("POST", "/api/message", body)
		if code != 400 || !strings.Contains(resp["error"].(string), want) {
			t.Errorf("%.40s: %d %v", body, code, resp)
		}
	}
	// A good body without a display: 503, after the checks.
	if code, resp, _ := b.call("POST", "/api/message", `{"message":"hi"}`); code != 503 || resp["error"] != "display unavailable" {
		t.Errorf("without a display: %d %v", code, resp)
	}
}

func TestHatStatus(t *testing.T) {
	b := newBox(t, nil)
	for _, path := range []string{"/api/hat/status", "/api/mupihat/status"} {
		if code, body, _ := b.call("GET", path, ""); code != 503 || body["error"] == nil {
			t.Errorf("%s without hatd: %d %v", path, code, body)
		}
	}
	b = newBox(t, func(d *Deps) { d.Hat = fakeHat{raw: json.RawMessage(`{"battery_percent":74}`)} })
	if code, body, _ := b.call("GET", "/api/mupihat/status", ""); code != 200 || body["battery_percent"] != 74.0 {
		t.Errorf("with hatd: %d %v", code, body)
	}
	b = newBox(t, func(d *Deps) {
		d.Hat = fakeHat{err: fmt.Errorf("%w: dial unix /run/hatd.sock: connect: connection refused", hat.ErrUnavailable)}
	})
	if code, body, _ := b.call("GET", "/api/hat/status", ""); code != 503 || body["error"] != "battery board service unavailable" {
		t.Errorf("hatd down: %d %v, want 503 without the socket's path", code, body)
	}
	b = newBox(t, func(d *Deps) {
		d.Hat = fakeHat{err: &fault.Error{Kind: fault.Unavailable, Msg: "battery board service unavailable", Cause: errors.New("dial unix /run/hatd.sock"), RetryAfter: 2500 * time.Millisecond}}
	})
	if code, body, h := b.call("GET", "/api/mupihat/status", ""); code != 503 || h.Get("Retry-After") != "3" || body["error"] != "battery board service unavailable" {
		t.Errorf("hatd restarting: %d %v Retry-After %q", code, body, h.Get("Retry-After"))
	}
}

// What Home Assistant reads every few seconds answers 200 with JSON.
func TestSystemAndAdminAuth(t *testing.T) {
	b := newBox(t, nil)
	if code, body, _ := b.call("GET", "/api/system", ""); code != 200 || body["online"] != true {
		t.Errorf("/api/system: %d %v", code, body)
	}
	if code, body, _ := b.call("GET", "/api/admin/auth", ""); code != 200 || body["protected"] != false || body["authenticated"] != true {
		t.Errorf("/api/admin/auth: %d %v", code, body)
	}
}

func TestRescanFindsNewFolders(t *testing.T) {
	b := newBox(t, nil)
	if err := testmedia.Library(b.media, map[string][]float64{"Musik/Neu": {1}}); err != nil {
		t.Fatal(err)
	}
	code, body, _ := b.call("POST", "/api/admin/library/rescan", `{}`)
	if code != 200 || body["folders"] != 3.0 {
		t.Errorf("rescan: %d %v", code, body)
	}
	b.folderID("Neu")
}

func TestHomeCarriesPlayableCommands(t *testing.T) {
	b := newBox(t, nil)
	_, h, _ := b.call("GET", "/api/home", "")
	cats := h["categories"].([]any)
	if len(cats) != 2 {
		t.Fatalf("categories %v", cats)
	}
	item := cats[0].(map[string]any)["rows"].([]any)[0].(map[string]any)["items"].([]any)[0].(map[string]any)
	cmd, _ := json.Marshal(item["command"])
	code, st, _ := b.call("POST", "/api/command", string(cmd))
	if code != 200 || st["state"] != "playing" {
		t.Errorf("the home item's command %s: %d %v", cmd, code, st)
	}
}

// Every failure of the box is named for the client, never by its cause.
func TestFailuresAreNamed(t *testing.T) {
	cause := errors.New("open /perm/media/x/cover.jpg: input/output error")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{cause, "library scan failed"},
		{fault.Wrap(fault.Internal, cause, "cache unreadable"), "cache unreadable"},
		{fmt.Errorf("x: %w", fault.New(fault.Conflict, "queue is empty")), "x: queue is empty"},
		{fmt.Errorf("x: %w", fault.NotFound), "x: not found"},
	} {
		if got := fault.Message(answer.Failed("library scan failed", tc.err)); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.err, got, tc.want)
		}
	}
}
