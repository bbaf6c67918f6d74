package hav1

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
)

// Errors of this layer that the contract names apart from the kind.
var (
	errMalformed   = fault.New(fault.Invalid, "malformed request")
	errScope       = fault.New(fault.Forbidden, "this token lacks the scope for this call")
	errUnsupported = fault.New(fault.Invalid, "not supported by this box")
	errNotHere     = fault.New(fault.NotFound, "the home-automation API is served over HTTPS on port 8443 only")
)

// errPlainHTTP answers a client that speaks plain HTTP to the TLS port.
var errPlainHTTP = &fault.Error{Kind: fault.Invalid, Msg: "this port speaks HTTPS only; use https://", Cause: errMalformed}

// malformed marks a body the contract calls invalid_request (bad JSON, a
// missing field), as opposed to a value out of range (invalid_value).
func malformed(format string, a ...any) error {
	return &fault.Error{Kind: fault.Invalid, Msg: fmt.Sprintf(format, a...), Cause: errMalformed}
}

func scopeError(s pairing.Scope) error {
	return &fault.Error{Kind: fault.Forbidden, Msg: "this token lacks the " + string(s) + " scope", Cause: errScope}
}

func unsupported(format string, a ...any) error {
	return &fault.Error{Kind: fault.Invalid, Msg: fmt.Sprintf(format, a...), Cause: errUnsupported}
}

// errorBody is the contract's one error shape.
type errorBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// codeOf is the one table from errors to the contract's statuses and
// snake_case codes: first the errors it names apart, then by kind.
func codeOf(err error) (int, string) {
	switch {
	case errors.Is(err, pairing.ErrNotEnabled):
		return http.StatusForbidden, "pairing_not_enabled"
	case errors.Is(err, pairing.ErrInProgress):
		return http.StatusConflict, "pairing_in_progress"
	case errors.Is(err, pairing.ErrWrongCode):
		return http.StatusForbidden, "invalid_pairing_code"
	case errors.Is(err, pairing.ErrExpired):
		return http.StatusGone, "pairing_expired"
	case errors.Is(err, pairing.ErrNoScope), errors.Is(err, errScope):
		return http.StatusForbidden, "insufficient_scope"
	case errors.Is(err, errUnsupported):
		return http.StatusUnprocessableEntity, "unsupported_command"
	case errors.Is(err, errMalformed):
		return http.StatusBadRequest, "invalid_request"
	}
	switch fault.KindOf(err) {
	case fault.Invalid:
		return http.StatusBadRequest, "invalid_value"
	case fault.Unauthorized:
		return http.StatusUnauthorized, "unauthorized"
	case fault.Forbidden:
		return http.StatusForbidden, "forbidden"
	case fault.NotFound:
		return http.StatusNotFound, "not_found"
	case fault.Conflict:
		// The player cannot do it now (nothing queued): the contract's
		// word for a source that cannot carry out a command.
		return http.StatusConflict, "provider_unavailable"
	case fault.TooLarge:
		return http.StatusRequestEntityTooLarge, "request_too_large"
	case fault.Unsupported:
		return http.StatusUnsupportedMediaType, "unsupported_media_type"
	case fault.Busy:
		return http.StatusTooManyRequests, "rate_limited"
	case fault.Unavailable:
		return http.StatusServiceUnavailable, "temporarily_unavailable"
	}
	return http.StatusInternalServerError, "internal_error"
}

// bodyOf is the status and body for err, for fail and for the answer to
// plain HTTP on the TLS port, which has no ResponseWriter.
func bodyOf(err error) (int, []byte) {
	status, code := codeOf(err)
	data, _ := json.Marshal(errorBody{Success: false, Error: code, Message: fault.Message(err)})
	return status, data
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

var okBody = map[string]bool{"success": true}

// fail is the only place that writes an error response. Failures of the
// box itself are logged with their cause; refusals are not (a client
// polling with a revoked token would fill the log).
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, data := bodyOf(err)
	if status == http.StatusInternalServerError && h.log != nil {
		h.log.Error("home-automation request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	}
	if status == http.StatusTooManyRequests {
		d := max(fault.RetryAfterOf(err), time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}
