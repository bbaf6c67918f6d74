// Package answer is how every HTTP surface of the box answers: the local
// API (:8090), the home-automation API (:8443) and the daemons' sockets.
// One JSON writer, one body decoder configured per surface, one table from
// fault kinds to status and Retry-After, one error writer whose body shape
// is the surface's own. Every error, the routers' 404 and 405 included, is
// JSON.
package answer

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/storybox/storybox/services/internal/fault"
)

// JSON answers with v as JSON: the one JSON writer.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Encoded answers with data, JSON already encoded and ending in a newline
// as JSON's answers do, for a hot path that encodes from a cache (GET
// /api/status).
func Encoded(w http.ResponseWriter, status int, data []byte) {
	h := w.Header()
	h["Content-Type"] = jsonType
	if len(data) > 2048 {
		// Beyond what net/http buffers before it sends a response
		// chunked (and counts the length itself).
		h.Set("Content-Length", strconv.Itoa(len(data)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// jsonType is the Content-Type of JSON answers, one slice for all of them:
// header values are replaced by Set and copied by Add, never written to.
var jsonType = []string{"application/json"}

// Route misses. Their errors carry these as causes, so a surface whose
// contract has no 405 can tell them apart (Status answers 405 for
// ErrNoMethod).
var (
	ErrNoRoute  = errors.New("no such endpoint")
	ErrNoMethod = errors.New("method not allowed")
)

// NoRoute is the error for a path no route serves.
func NoRoute(r *http.Request) error {
	return &marked{msg: "no such endpoint: " + r.URL.Path, kind: fault.NotFound, mark: ErrNoRoute}
}

// NoMethod is the error for a path that is served with other methods.
func NoMethod(r *http.Request) error {
	return &marked{msg: "method " + r.Method + " is not allowed on " + r.URL.Path, kind: fault.Invalid, mark: ErrNoMethod}
}

// Status is the HTTP status for err: its kind's (fault.HTTPStatus), and
// 405 for a method the path is not served with.
func Status(err error) int {
	if errors.Is(err, ErrNoMethod) {
		return http.StatusMethodNotAllowed
	}
	return fault.HTTPStatus(fault.KindOf(err))
}

// SetRetryAfter sets Retry-After when waiting helps with err (fault.Wait):
// every 429 and 503 says when to come back.
func SetRetryAfter(h http.Header, err error) {
	if v := fault.RetryAfterHeader(fault.Wait(err)); v != "" {
		h.Set("Retry-After", v)
	}
}

// Failed names a failure of the box: an error that carries no kind of its
// own becomes an internal one told to the client as what ("library scan
// failed"), not as a bare "internal error"; its cause stays for the log.
// Errors that have a kind already keep it, their message and their wait.
func Failed(what string, err error) error {
	var fe *fault.Error
	if errors.As(err, &fe) || fault.KindOf(err) != fault.Internal {
		return err
	}
	return fault.Wrap(fault.Internal, err, what)
}

// Surface is how one HTTP surface answers. The zero value answers errors
// as {"error": message}, logs nothing and decodes bodies with the zero
// Body's rules.
type Surface struct {
	// Body are the rules for the surface's JSON request bodies.
	Body Body
	// Shape is the surface's error body for err and its status; nil:
	// {"error": fault.Message(err)} with Status(err).
	Shape func(err error) (status int, body any)
	// Log hears failures of the kinds in Logged (nil: Internal only),
	// with their cause; refusals are not logged, so a client repeating a
	// mistake cannot fill the log. Nil: nothing is logged.
	Log    *slog.Logger
	Logged []fault.Kind
	// Name goes before "request failed" in the log ("home-automation").
	Name string
}

// plainError is the default error shape.
type plainError struct {
	Error string `json:"error"`
}

// Decode reads r's body under the surface's rules.
func (s *Surface) Decode(r *http.Request, dst any) error { return s.Body.Decode(r, dst) }

// Fail answers err: the only error writer. The status and body are the
// surface's (Shape), Retry-After is set when waiting helps, and failures of
// the logged kinds are logged with their cause; nothing logs a request body.
func (s *Surface) Fail(w http.ResponseWriter, r *http.Request, err error) {
	status, body := s.shape(err)
	if s.Log != nil && s.logs(fault.KindOf(err)) {
		msg := "request failed"
		if s.Name != "" {
			msg = s.Name + " " + msg
		}
		level := slog.LevelWarn
		if fault.KindOf(err) == fault.Internal {
			level = slog.LevelError
		}
		s.Log.Log(r.Context(), level, msg, slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	}
	SetRetryAfter(w.Header(), err)
	JSON(w, status, body)
}

// Answer writes v with 200, or err when it is not nil.
func (s *Surface) Answer(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		s.Fail(w, r, err)
		return
	}
	JSON(w, http.StatusOK, v)
}

// Render is the status and encoded body Fail would answer err with, for a
// connection that has no ResponseWriter (plain HTTP on a TLS port).
func (s *Surface) Render(err error) (int, []byte) {
	status, body := s.shape(err)
	data, _ := json.Marshal(body)
	return status, append(data, '\n')
}

func (s *Surface) shape(err error) (int, any) {
	if s.Shape != nil {
		return s.Shape(err)
	}
	return Status(err), plainError{Error: fault.Message(err)}
}

func (s *Surface) logs(k fault.Kind) bool {
	if s.Logged == nil {
		return k == fault.Internal
	}
	return slices.Contains(s.Logged, k)
}

// NotFound answers a path no route serves.
func (s *Surface) NotFound(w http.ResponseWriter, r *http.Request) { s.Fail(w, r, NoRoute(r)) }

// MethodNotAllowed answers a path served with other methods.
func (s *Surface) MethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	s.Fail(w, r, NoMethod(r))
}

// Mux serves m with its own 404 and 405 answered by the surface, in JSON,
// instead of ServeMux's plain text.
func (s *Surface) Mux(m *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := m.Handler(r)
		if pattern != "" {
			// ServeHTTP again rather than h: only it sets the path values.
			m.ServeHTTP(w, r)
			return
		}
		// ServeMux tells a 405 from a 404 only by answering; listen to it.
		var miss missWriter
		h.ServeHTTP(&miss, r)
		if miss.status == http.StatusMethodNotAllowed {
			if allow := miss.header.Get("Allow"); allow != "" {
				w.Header().Set("Allow", allow)
			}
			s.MethodNotAllowed(w, r)
			return
		}
		s.NotFound(w, r)
	})
}

// missWriter keeps the status and headers of ServeMux's own answer to a
// route miss, and drops its plain-text body.
type missWriter struct {
	header http.Header
	status int
}

func (m *missWriter) Header() http.Header {
	if m.header == nil {
		m.header = http.Header{}
	}
	return m.header
}

func (m *missWriter) WriteHeader(status int) {
	if m.status == 0 {
		m.status = status
	}
}

func (m *missWriter) Write(b []byte) (int, error) {
	m.WriteHeader(http.StatusOK)
	return len(b), nil
}
