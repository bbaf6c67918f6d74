package answer

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

func TestJSONWritesTypeStatusAndOneLine(t *testing.T) {
	w := httptest.NewRecorder()
	JSON(w, http.StatusAccepted, map[string]any{"a": 1, "b": "<x>"})
	if w.Code != http.StatusAccepted || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q", w.Code, w.Header().Get("Content-Type"))
	}
	if got := w.Body.String(); got != "{\"a\":1,\"b\":\"\\u003cx\\u003e\"}\n" {
		t.Errorf("body %q", got)
	}
}

// Encoded writes what a cache encoded as JSON would: the same type, and a
// length beyond what net/http buffers.
func TestEncoded(t *testing.T) {
	for _, n := range []int{10, 5000} {
		data := append([]byte(`{"a":"`+strings.Repeat("x", n)+`"}`), '\n')
		w := httptest.NewRecorder()
		Encoded(w, http.StatusOK, data)
		want := ""
		if len(data) > 2048 {
			want = strconv.Itoa(len(data))
		}
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Content-Length") != want || !bytes.Equal(w.Body.Bytes(), data) {
			t.Errorf("%d bytes: %d %v", len(data), w.Code, w.Header())
		}
	}
}

type target struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

func post(body, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

func TestBodyRules(t *testing.T) {
	strict := Body{Limit: 32}
	lenient := Body{Limit: 32, Lenient: true}
	for _, tc := range []struct {
		name        string
		b           Body
		body, ctype string
		kind        fault.Kind // "" for success
		malformed   bool
		msg         string
	}{
		{"one object", strict, `{"name":"a","n":2}`, "application/json", "", false, ""},
		{"charset parameter", strict, `{"n":2}`, "application/json; charset=utf-8", "", false, ""},
		{"no content type", strict, `{"n":2}`, "", fault.Unsupported, false, "Content-Type must be application/json"},
		{"wrong content type", strict, `{"n":2}`, "text/plain", fault.Unsupported, false, "Content-Type must be application/json"},
		{"exactly the limit", strict, `{"name":"` + strings.Repeat("a", 21) + `"}`, "application/json", "", false, ""},
		{"one byte over", strict, `{"name":"` + strings.Repeat("a", 22) + `"}`, "application/json", fault.TooLarge, false, "body is larger than 32 bytes"},
		{"over, lenient too", lenient, strings.Repeat(" ", 33), "application/json", fault.TooLarge, false, "body is larger than 32 bytes"},
		{"unknown field, strict", strict, `{"nam":"a"}`, "application/json", fault.Invalid, true, `unknown field "nam"`},
		{"unknown field, lenient", lenient, `{"nam":"a","n":1}`, "application/json", "", false, ""},
		{"wrong type names the field", lenient, `{"n":"x"}`, "application/json", fault.Invalid, true, `field "n" must be an integer, not string`},
		{"trailing data", strict, `{"n":1} {}`, "application/json", fault.Invalid, true, "expected one JSON object"},
		{"not an object", strict, `[1]`, "application/json", fault.Invalid, true, "body must be one JSON object"},
		{"empty", strict, "  ", "application/json", fault.Invalid, true, "body is empty; expected one JSON object"},
		{"truncated", strict, `{"n":`, "application/json", fault.Invalid, true, "truncated JSON"},
	} {
		var dst target
		err := tc.b.Decode(post(tc.body, tc.ctype), &dst)
		if tc.kind == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if fault.KindOf(err) != tc.kind || fault.Message(err) != tc.msg || errors.Is(err, ErrMalformed) != tc.malformed {
			t.Errorf("%s: %v (kind %s, message %q, malformed %v), want %s %q malformed %v", tc.name, err, fault.KindOf(err), fault.Message(err), errors.Is(err, ErrMalformed), tc.kind, tc.msg, tc.malformed)
		}
	}
}

// A refusal names the field and what is wrong, never the value: a body may
// carry a password.
func TestBodyErrorsNeverQuoteTheBody(t *testing.T) {
	type login struct {
		Password string `json:"password"`
		N        uint8  `json:"n"`
		At       time.Time
	}
	for _, body := range []string{
		`{"password":"hunter2","extra":1}`,
		`{"password":hunter2}`,
		`{"password":"hunter2"} hunter2`,
		`{"password":"hunter2","n":12345678}`,
		`{"password":"hunter2","n":1.12345678}`,
		`{"password":"hunter2","At":"12345678"}`,
		`{"password":"\xhunter2"}`,
	} {
		err := (Body{}).Decode(post(body, "application/json"), &login{})
		if err == nil || fault.KindOf(err) != fault.Invalid {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if msg := fault.Message(err); strings.Contains(msg, "hunter2") || strings.Contains(msg, "12345678") || strings.Contains(msg, "'h'") {
			t.Errorf("%s: the message quotes the body: %q", body, msg)
		}
	}
}

func TestBodyDefaultLimit(t *testing.T) {
	big := `{"name":"` + strings.Repeat("a", DefaultLimit) + `"}`
	if err := (Body{}).Decode(post(big, "application/json"), &target{}); fault.KindOf(err) != fault.TooLarge {
		t.Errorf("a body past DefaultLimit: %v", err)
	}
}

func TestMalformedKeepsItsMessage(t *testing.T) {
	err := Malformed("text is %s", "required")
	if fault.KindOf(err) != fault.Invalid || !errors.Is(err, ErrMalformed) || fault.Message(err) != "text is required" {
		t.Errorf("%v: kind %s, message %q", err, fault.KindOf(err), fault.Message(err))
	}
}

func TestStatusOfEveryKind(t *testing.T) {
	for _, k := range fault.Kinds() {
		if got, want := Status(fault.New(k, "x")), fault.HTTPStatus(k); got != want {
			t.Errorf("%s: %d, want %d", k, got, want)
		}
	}
	r := httptest.NewRequest(http.MethodPut, "/a", nil)
	if got := Status(NoMethod(r)); got != http.StatusMethodNotAllowed {
		t.Errorf("no method: %d", got)
	}
	if got := Status(NoRoute(r)); got != http.StatusNotFound {
		t.Errorf("no route: %d", got)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fault.New(fault.Busy, "x"), "1"},
		{fault.New(fault.Unavailable, "x"), "1"},
		{fault.Retry(fault.Busy, 2500*time.Millisecond, "x"), "3"},
		{fault.Retry(fault.Upstream, 10*time.Second, "x"), "10"},
		{fault.New(fault.Invalid, "x"), ""},
		{errors.New("plain"), ""},
	} {
		h := http.Header{}
		SetRetryAfter(h, tc.err)
		if got := h.Get("Retry-After"); got != tc.want {
			t.Errorf("%v (%s): Retry-After %q, want %q", tc.err, fault.KindOf(tc.err), got, tc.want)
		}
	}
}

func TestFailed(t *testing.T) {
	plain := errors.New("/var/secret: disk full")
	err := Failed("scan failed", plain)
	if fault.KindOf(err) != fault.Internal || fault.Message(err) != "scan failed" || !errors.Is(err, plain) {
		t.Errorf("plain: %v, %q", err, fault.Message(err))
	}
	busy := fault.Retry(fault.Busy, 3*time.Second, "screen busy")
	if err := Failed("x", busy); err != busy {
		t.Errorf("a kinded error was rewrapped: %v", err)
	}
}

// logged is a log that keeps its lines.
func logged() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

func TestFailDefaultShapeAndLog(t *testing.T) {
	log, buf := logged()
	s := Surface{Log: log}
	r := httptest.NewRequest(http.MethodGet, "/p", nil)
	for _, tc := range []struct {
		err    error
		status int
		body   string
		logs   bool
		retry  string
	}{
		{fault.New(fault.Invalid, "bad value"), 400, `{"error":"bad value"}`, false, ""},
		{fault.Wrap(fault.Internal, errors.New("/secret"), "it broke"), 500, `{"error":"it broke"}`, true, ""},
		{fault.New(fault.Unavailable, "off"), 503, `{"error":"off"}`, false, "1"},
	} {
		buf.Reset()
		w := httptest.NewRecorder()
		s.Fail(w, r, tc.err)
		if w.Code != tc.status || strings.TrimSpace(w.Body.String()) != tc.body || w.Header().Get("Retry-After") != tc.retry {
			t.Errorf("%v: %d %s Retry-After %q", tc.err, w.Code, w.Body, w.Header().Get("Retry-After"))
		}
		if line := buf.String(); (line != "") != tc.logs || (tc.logs && (!strings.Contains(line, "/secret") || !strings.Contains(line, "level=ERROR"))) {
			t.Errorf("%v: logged %q", tc.err, line)
		}
	}
}

func TestFailSurfaceShapeAndLoggedKinds(t *testing.T) {
	log, buf := logged()
	s := Surface{
		Name:   "test",
		Log:    log,
		Logged: []fault.Kind{fault.Upstream},
		Shape: func(err error) (int, any) {
			return http.StatusTeapot, map[string]string{"code": string(fault.KindOf(err))}
		},
	}
	w := httptest.NewRecorder()
	s.Fail(w, httptest.NewRequest(http.MethodGet, "/p", nil), fault.New(fault.Upstream, "peer down"))
	if w.Code != http.StatusTeapot || strings.TrimSpace(w.Body.String()) != `{"code":"upstream"}` {
		t.Errorf("%d %s", w.Code, w.Body)
	}
	if line := buf.String(); !strings.Contains(line, `msg="test request failed"`) || !strings.Contains(line, "level=WARN") {
		t.Errorf("logged %q", line)
	}
	status, data := s.Render(fault.New(fault.Upstream, "x"))
	if status != http.StatusTeapot || string(data) != "{\"code\":\"upstream\"}\n" {
		t.Errorf("render: %d %q", status, data)
	}
}

func TestMuxMissesAreJSON(t *testing.T) {
	m := http.NewServeMux()
	m.HandleFunc("GET /thing/{id}", func(w http.ResponseWriter, r *http.Request) {
		JSON(w, http.StatusOK, map[string]string{"id": r.PathValue("id")})
	})
	var s Surface
	h := s.Mux(m)
	for _, tc := range []struct {
		method, path string
		status       int
		body, allow  string
	}{
		{"GET", "/thing/7", 200, `{"id":"7"}`, ""},
		{"GET", "/nothing", 404, `{"error":"no such endpoint: /nothing"}`, ""},
		{"DELETE", "/thing/7", 405, `{"error":"method DELETE is not allowed on /thing/7"}`, "GET, HEAD"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.status || strings.TrimSpace(w.Body.String()) != tc.body || w.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d %q Allow %q", tc.method, tc.path, w.Code, w.Body, w.Header().Get("Allow"))
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q", tc.method, tc.path, ct)
		}
		var v any
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Errorf("%s %s: not JSON: %v", tc.method, tc.path, err)
		}
	}
}
