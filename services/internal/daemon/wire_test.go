package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

type thing struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// testDaemon serves a few routes the way the daemons do, on a socket.
func testDaemon(t *testing.T) *Client {
	t.Helper()
	s := Socket(nil)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		var v thing
		err := s.Decode(r, &v)
		s.Answer(w, r, v, err)
	})
	mux.HandleFunc("GET /fail/{kind}", func(w http.ResponseWriter, r *http.Request) {
		k := fault.Kind(strings.ReplaceAll(r.PathValue("kind"), "_", " "))
		s.Answer(w, r, nil, fault.Wrap(k, errors.New("/secret/path"), "it went wrong"))
	})
	mux.HandleFunc("GET /coded", func(w http.ResponseWriter, r *http.Request) {
		s.Fail(w, r, fault.New(fault.Conflict, "household full").Coded("household_full"))
	})
	mux.HandleFunc("GET /later", func(w http.ResponseWriter, r *http.Request) {
		s.Fail(w, r, fault.Retry(fault.Busy, 3*time.Second, "board busy"))
	})
	mux.HandleFunc("GET /garbage", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html>")
	})
	mux.HandleFunc("GET /notjson", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "{") })
	path := filepath.Join(shortDir(t), "d.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ServeSocket(ctx, path, Handler(s, mux), nil) }()
	t.Cleanup(func() { cancel(); <-done })
	waitServed(t, path)
	return NewClient(path, "testd", "test service unavailable")
}

func TestClientCall(t *testing.T) {
	c := testDaemon(t)
	ctx := context.Background()
	var out thing
	if err := c.Call(ctx, "POST", "/echo", thing{Name: "a", N: 2}, &out); err != nil || out != (thing{Name: "a", N: 2}) {
		t.Errorf("echo: %+v %v", out, err)
	}
	var raw json.RawMessage
	if err := c.Call(ctx, "POST", "/echo", thing{Name: "b"}, &raw); err != nil || string(raw) != `{"name":"b","n":0}` {
		t.Errorf("raw: %q %v", raw, err)
	}
	for _, tc := range []struct {
		path string
		kind fault.Kind
		msg  string
	}{
		// The daemon's kind and message come through; its causes don't.
		{"/fail/conflict", fault.Conflict, "it went wrong: /secret/path"},
		{"/fail/upstream", fault.Upstream, "it went wrong"},
		{"/fail/not_found", fault.NotFound, "it went wrong: /secret/path"},
		// A daemon's login refusal is not the caller's.
		{"/fail/forbidden", fault.Internal, "it went wrong: /secret/path"},
		{"/fail/internal", fault.Internal, "it went wrong"},
		{"/garbage", fault.Unavailable, "test service unavailable"},
		{"/notjson", fault.Unavailable, "test service unavailable"},
		// A route the daemon lacks is told as such; a method it lacks
		// means client and daemon disagree: the service is unavailable.
		{"/nothing", fault.NotFound, "no such endpoint: /nothing"},
		{"/echo", fault.Unavailable, "test service unavailable"},
	} {
		err := c.Call(ctx, "GET", tc.path, nil, &out)
		if fault.KindOf(err) != tc.kind || fault.Message(err) != tc.msg {
			t.Errorf("%s: %v (%s, %q), want %s %q", tc.path, err, fault.KindOf(err), fault.Message(err), tc.kind, tc.msg)
		}
	}
	// A daemon's own code reaches the caller, whose page says it in its
	// words; a kind's code is not sent twice.
	if err := c.Call(ctx, "GET", "/coded", nil, nil); fault.CodeOf(err) != "household_full" || fault.KindOf(err) != fault.Conflict {
		t.Errorf("coded: %v (%s)", err, fault.CodeOf(err))
	}
	if err := c.Call(ctx, "GET", "/fail/conflict", nil, nil); fault.CodeOf(err) != "conflict" {
		t.Errorf("a kind's code: %q", fault.CodeOf(err))
	}
	// A daemon's wait reaches the caller.
	if err := c.Call(ctx, "GET", "/later", nil, nil); fault.KindOf(err) != fault.Busy || fault.RetryAfterOf(err) != 3*time.Second {
		t.Errorf("busy: %v (%s, wait %s)", err, fault.KindOf(err), fault.RetryAfterOf(err))
	}
	gone := NewClient(filepath.Join(shortDir(t), "none.sock"), "testd", "test service unavailable")
	if err := gone.Call(ctx, "GET", "/x", nil, nil); fault.KindOf(err) != fault.Unavailable || fault.Message(err) != "test service unavailable" {
		t.Errorf("no daemon: %v", err)
	}
}

// The socket's body rules: known fields only, at most MaxBody (413, not
// a truncated read refused as bad JSON), and no error quotes the body.
func TestDecode(t *testing.T) {
	s := Socket(nil)
	for _, tc := range []struct {
		ctype, body string
		kind        fault.Kind
		msg         string
	}{
		{"application/json; charset=utf-8", `{"name":"x"}`, "", ""},
		{"text/plain", `{"name":"x"}`, fault.Unsupported, "Content-Type must be application/json"},
		{"application/json", `{"name":"x","password":"hunter2"}`, fault.Invalid, `unknown field "password"`},
		{"application/json", `{"n":"hunter2"}`, fault.Invalid, `field "n" must be an integer, not string`},
		{"application/json", `{} {}`, fault.Invalid, "expected one JSON object"},
		{"application/json", `{"name":"` + strings.Repeat("x", MaxBody) + `"}`, fault.TooLarge, fmt.Sprintf("body is larger than %d bytes", MaxBody)},
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
		r.Header.Set("Content-Type", tc.ctype)
		var v thing
		err := s.Decode(r, &v)
		if tc.kind == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		if fault.KindOf(err) != tc.kind || err.Error() != tc.msg {
			t.Errorf("%.40s: %v, want %s %q", tc.body, err, tc.kind, tc.msg)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the body leaked into %q", err)
		}
	}
}

func TestFail(t *testing.T) {
	rec := httptest.NewRecorder()
	Socket(nil).Fail(rec, httptest.NewRequest("GET", "/", nil), fault.New(fault.Busy, "later"))
	if rec.Code != http.StatusTooManyRequests || rec.Body.String() != `{"error":"later","kind":"busy"}`+"\n" ||
		rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("%d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}

// Every answer on a socket is JSON and never cached, the mux's own 404 and
// 405 and an oversized body's 413 included.
func TestSocketMissesAreJSON(t *testing.T) {
	s := Socket(nil)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		var v thing
		err := s.Decode(r, &v)
		s.Answer(w, r, v, err)
	})
	h := Handler(s, mux)
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/nothing", "", 404, `{"error":"no such endpoint: /nothing","kind":"not found"}`},
		{"GET", "/echo", "", 405, `{"error":"method GET is not allowed on /echo","kind":"invalid"}`},
		{"POST", "/echo", `{"name":"` + strings.Repeat("x", MaxBody) + `"}`, 413, fmt.Sprintf(`{"error":"body is larger than %d bytes","kind":"too large"}`, MaxBody)},
		{"POST", "/echo", `{"name":"a"}`, 200, `{"name":"a","n":0}`},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.status || strings.TrimSpace(rec.Body.String()) != tc.want ||
			rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: %d %v %s", tc.method, tc.path, rec.Code, rec.Header(), rec.Body)
		}
	}
}
