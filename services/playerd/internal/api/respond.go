package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is the one error shape of the API. A rule's refusal also
// names the rule and until when it holds.
type errorBody struct {
	Error  string     `json:"error"`
	Code   string     `json:"code"` // errorCode: for programs, and the admin page's translation
	Reason string     `json:"reason,omitempty"`
	Until  *time.Time `json:"until,omitempty"`
}

// fail answers with err's kind as the status and what a client may be told
// of it (fault.Message). Failures of the box itself are logged with their
// cause; refusals and 503 (a part that is down, which a poller would
// otherwise repeat into gokrazy's 100 log lines) are not.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	kind := fault.KindOf(err)
	if kind == fault.Internal && h.log != nil {
		h.log.Error("request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	}
	if d := retryAfter(err); d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
	}
	body := errorBody{Error: fault.Message(err), Code: errorCode(err)}
	var refusal *rules.Refusal
	if errors.As(err, &refusal) {
		body.Reason = refusal.Reason
		if !refusal.Until.IsZero() {
			body.Until = &refusal.Until
		}
	}
	h.writeBody(w, fault.HTTPStatus(kind), body)
}

// retryAfter is when a client should try err again: the wait it names,
// and at least a second for the kinds that mean "not now" (Busy,
// Unavailable), so that every 429 and 503 says when; 0 where waiting does
// not help.
func retryAfter(err error) time.Duration {
	d := fault.RetryAfterOf(err)
	if k := fault.KindOf(err); k == fault.Busy || k == fault.Unavailable {
		d = max(d, time.Second)
	}
	return d
}

// failed names a failure of the box: an error that carries no kind of its
// own becomes an internal one told to the client as what ("library scan
// failed"), not as a bare "internal error"; its cause stays for the log.
// Errors that have a kind already keep it and their message.
func failed(what string, err error) error {
	var fe *fault.Error
	if errors.As(err, &fe) || fault.KindOf(err) != fault.Internal {
		return err
	}
	return fault.Wrap(fault.Internal, err, what)
}

// writeError is the only place that writes an error response; handlers go
// through fail, the router's own 404 and 405 come here directly.
func (h *handler) writeError(w http.ResponseWriter, _ *http.Request, status int, msg string) {
	h.writeBody(w, status, errorBody{Error: msg, Code: statusCode(status)})
}

func (h *handler) writeBody(w http.ResponseWriter, status int, body errorBody) {
	writeJSON(w, status, body)
}
