package hav1

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// The contract's statuses and codes, one per error the API tells apart.
func TestErrorTable(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{pairing.ErrNotEnabled, 403, "pairing_not_enabled"},
		{pairing.ErrInProgress, 409, "pairing_in_progress"},
		{pairing.ErrWrongCode, 403, "invalid_pairing_code"},
		{pairing.ErrExpired, 410, "pairing_expired"},
		{pairing.ErrNoScope, 403, "insufficient_scope"},
		{pairing.ErrBadToken, 401, "unauthorized"},
		{scopeError(pairing.Power), 403, "insufficient_scope"},
		{unsupported("mute"), 422, "unsupported_command"},
		{malformed("x"), 400, "invalid_request"},
		{errPlainHTTP, 400, "invalid_request"},
		{fault.New(fault.Invalid, "volume"), 400, "invalid_value"},
		{fault.New(fault.Conflict, "queue is empty"), 409, "provider_unavailable"},
		{fault.Retry(fault.Busy, time.Second, "slow down"), 429, "rate_limited"},
		{player.ErrClosed, 503, "temporarily_unavailable"},
		{errNotHere, 404, "not_found"},
		{fault.New(fault.Forbidden, "a rule"), 403, "forbidden"},
		{answer.NoRoute(httptest.NewRequest("GET", "/x", nil)), 404, "not_found"},
		{answer.NoMethod(httptest.NewRequest("PUT", "/x", nil)), 400, "invalid_request"},
	} {
		if s, code := codeOf(c.err); s != c.status || code != c.code {
			t.Errorf("%v: %d %s, want %d %s", c.err, s, code, c.status, c.code)
		}
	}
	// Every kind has the status it has everywhere else (fault.HTTPStatus):
	// before, upstream failures were 500 here and 502 on :8090.
	for _, k := range fault.Kinds() {
		status, code := codeOf(fault.New(k, "x"))
		if status != fault.HTTPStatus(k) || code == "" || strings.ToLower(code) != code || strings.ContainsAny(code, " -") {
			t.Errorf("kind %q: %d %q, want %d and a snake_case code", k, status, code, fault.HTTPStatus(k))
		}
	}
	if s, code := codeOf(fault.Wrap(fault.Upstream, errors.New("dial tcp 10.0.0.9:80"), "the station did not answer")); s != 502 || code != "upstream_unavailable" {
		t.Errorf("upstream: %d %s, want 502 upstream_unavailable", s, code)
	}
	// Internal causes stay in the log.
	s := newSurface(nil)
	_, body := s.Render(fault.Wrap(fault.Internal, errNotHere, "command failed"))
	if string(body) != `{"success":false,"error":"internal_error","message":"command failed"}`+"\n" {
		t.Errorf("internal error body %s", body)
	}
}

// Wherever the kind means "not now", the answer says when to come back:
// before, only 429 did, and a 503 (the player stopping, hatd restarting)
// had no Retry-After.
func TestRetryAfter(t *testing.T) {
	h := &handler{}
	for _, tc := range []struct {
		err    error
		status int
		header string
	}{
		{player.ErrClosed, 503, "1"},
		{&fault.Error{Kind: fault.Unavailable, Msg: "battery board service unavailable", RetryAfter: 6500 * time.Millisecond}, 503, "7"},
		{fault.Retry(fault.Busy, 60*time.Second, "cooldown"), 429, "60"},
		{fault.New(fault.Busy, "slow down"), 429, "1"},
		{fault.New(fault.Upstream, "no answer"), 502, ""},
		{fault.New(fault.Invalid, "volume"), 400, ""},
	} {
		rec := httptest.NewRecorder()
		h.fail(rec, httptest.NewRequest("GET", "/api/ha/v1/state", nil), tc.err)
		if rec.Code != tc.status || rec.Header().Get("Retry-After") != tc.header {
			t.Errorf("%v: %d Retry-After %q, want %d %q", tc.err, rec.Code, rec.Header().Get("Retry-After"), tc.status, tc.header)
		}
	}
}

func TestBearer(t *testing.T) {
	for header, want := range map[string]string{"": "", "Bearer ": "", "Bearer abc": "abc", "bearer abc ": "abc", "Basic abc": "", "Bearerabc": ""} {
		r := httptest.NewRequest("GET", "/?access_token=nope", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		if got := bearer(r); got != want {
			t.Errorf("%q: %q, want %q", header, got, want)
		}
	}
}

func TestServiceRecord(t *testing.T) {
	c := MDNSService("kinderzimmer", "7e1f82a4-55ab-47d7-8b60-02e8dff65b90", 8443)
	want := map[string]string{"product": "mupibox", "generation": "ng", "api_version": "1", "transport": "https", "pairing": "required",
		"device_id": "7e1f82a4-55ab-47d7-8b60-02e8dff65b90", "id": "7e1f82a4-55ab-47d7-8b60-02e8dff65b90"}
	if c.Type != "_mupibox._tcp" || c.Port != 8443 || len(c.Text) != len(want) {
		t.Fatalf("record %+v", c)
	}
	for k, v := range want {
		if c.Text[k] != v {
			t.Errorf("TXT %s=%q, want %q", k, c.Text[k], v)
		}
	}
}

func TestPlaybackOf(t *testing.T) {
	folder := "Folge A"
	st := player.Status{State: player.Stopped, Index: -1, Volume: 30}
	if p := PlaybackOf(st); p.State != "idle" || p.Title != nil || p.Position != nil || p.Volume != 30 {
		t.Errorf("stopped: %+v", p)
	}
	st = player.Status{State: player.Playing, Index: 0, Position: 12, Duration: 30, Volume: 40, Folder: &folder,
		Queue: []player.QueueItem{{ID: "t1", Title: "Kapitel 1", Provider: "local"}}}
	p := PlaybackOf(st)
	if p.State != "playing" || *p.Title != "Kapitel 1" || *p.Album != folder || *p.Position != 12 || *p.Duration != 30 || p.Artist != nil || p.CoverURL != nil {
		t.Errorf("playing: %+v", p)
	}
	st.State = player.Failed
	if PlaybackOf(st).State != "unavailable" {
		t.Error("a failed player is not unavailable")
	}
}

// testHandler is the API with the parts every route needs, and no client
// paired.
func testHandler(t *testing.T) http.Handler {
	t.Helper()
	m, err := auth.New(auth.Config{Dir: t.TempDir(), Params: auth.Params{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pairing.New(pairing.Config{File: filepath.Join(t.TempDir(), "clients.json"), DeviceID: "d"})
	if err != nil {
		t.Fatal(err)
	}
	return NewHandler(Deps{Pairing: p, CA: pemCA{}, Player: idle{}, Auth: m, Hosts: auth.NewHosts("box", nil)})
}

type pemCA struct{}

func (pemCA) CAPEM() []byte { return []byte("-----BEGIN CERTIFICATE-----\n") }

type idle struct{}

func (idle) Status() player.Status { return player.Status{Index: -1} }
func (idle) Do(context.Context, player.Command) (player.Status, error) {
	return player.Status{}, fault.New(fault.Conflict, "nothing queued")
}

// Every refusal is the contract's JSON error, the router's own included:
// an unknown path, a method the path is not served with (the contract has
// no 405: invalid_request), a body over the limit and one of another type.
// An unknown field is ignored (the contract grows), a malformed body is
// invalid_request.
func TestRefusalsAreContractJSON(t *testing.T) {
	h := testHandler(t)
	for _, tc := range []struct {
		method, path, ctype, body string
		status                    int
		code, message             string
	}{
		{"GET", Prefix + "/nothing", "", "", 404, "not_found", "no such endpoint: " + Prefix + "/nothing"},
		{"DELETE", Prefix + "/health", "", "", 400, "invalid_request", "method DELETE is not allowed on " + Prefix + "/health"},
		{"POST", Prefix + "/pair/start", "application/json", `{"client_id":"` + strings.Repeat("x", 16<<10) + `"}`, 413, "request_too_large", "body is larger than 16384 bytes"},
		{"POST", Prefix + "/pair/start", "text/plain", `{"client_id":"x"}`, 415, "unsupported_media_type", "Content-Type must be application/json"},
		{"POST", Prefix + "/pair/start", "application/json", `{"client_id":`, 400, "invalid_request", "truncated JSON"},
		{"POST", Prefix + "/pair/start", "application/json", `{"client_id":"x","client_name":"Home","newer":1}`, 403, "pairing_not_enabled", ""},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		r.Host = "box"
		if tc.ctype != "" {
			r.Header.Set("Content-Type", tc.ctype)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: not JSON: %q", tc.method, tc.path, w.Body)
			continue
		}
		if w.Code != tc.status || body["success"] != false || body["error"] != tc.code || (tc.message != "" && body["message"] != tc.message) {
			t.Errorf("%s %s: %d %v, want %d %s %q", tc.method, tc.path, w.Code, body, tc.status, tc.code, tc.message)
		}
	}
}
