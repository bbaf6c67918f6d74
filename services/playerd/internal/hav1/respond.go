package hav1

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
)

// Errors of this layer that the contract names apart from the kind. A
// malformed request (bad JSON, a missing field) carries
// answer.ErrMalformed.
var (
	errScope       = fault.New(fault.Forbidden, "this token lacks the scope for this call")
	errUnsupported = fault.New(fault.Invalid, "not supported by this box")
	errNotHere     = fault.New(fault.NotFound, "the home-automation API is served over HTTPS on port 8443 only")
)

// errPlainHTTP answers a client that speaks plain HTTP to the TLS port.
var errPlainHTTP = answer.Malformed("this port speaks HTTPS only; use https://")

// malformed marks a body the contract calls invalid_request (bad JSON, a
// missing field), as opposed to a value out of range (invalid_value).
func malformed(format string, a ...any) error { return answer.Malformed(format, a...) }

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

// codeOf is the contract's snake_case code for err, and its status. The
// status is answer.Status, as on :8090 and the daemons' sockets, except
// where the contract says otherwise: 410 for an expired pairing, 422 for a
// command this box does not support, and 400 for a wrong method.
func codeOf(err error) (int, string) {
	status := answer.Status(err)
	switch {
	case errors.Is(err, pairing.ErrNotEnabled):
		return status, "pairing_not_enabled"
	case errors.Is(err, pairing.ErrInProgress):
		return status, "pairing_in_progress"
	case errors.Is(err, pairing.ErrWrongCode):
		return status, "invalid_pairing_code"
	case errors.Is(err, pairing.ErrExpired):
		return http.StatusGone, "pairing_expired"
	case errors.Is(err, pairing.ErrNoScope), errors.Is(err, errScope):
		return status, "insufficient_scope"
	case errors.Is(err, errUnsupported):
		return http.StatusUnprocessableEntity, "unsupported_command"
	case errors.Is(err, answer.ErrMalformed):
		return status, "invalid_request"
	case errors.Is(err, answer.ErrNoMethod):
		// The contract has no 405: a method a path is not served with is
		// a malformed request.
		return http.StatusBadRequest, "invalid_request"
	}
	return status, kindCodes[fault.KindOf(err)]
}

// kindCodes are the codes of errors the contract does not name apart.
var kindCodes = map[fault.Kind]string{
	fault.Internal:     "internal_error",
	fault.Invalid:      "invalid_value",
	fault.Unauthorized: "unauthorized",
	fault.Forbidden:    "forbidden",
	fault.NotFound:     "not_found",
	// The player cannot do it now (nothing queued): the contract's word
	// for a source that cannot carry out a command.
	fault.Conflict:    "provider_unavailable",
	fault.TooLarge:    "request_too_large",
	fault.Unsupported: "unsupported_media_type",
	fault.Busy:        "rate_limited",
	fault.Unavailable: "temporarily_unavailable",
	// A station or feed that did not answer: not the box's failure.
	fault.Upstream: "upstream_unavailable",
}

// jsonBody are the API's body rules: the contract's largest body is a
// message of 1000 characters; fields it does not know are ignored, since
// the contract grows and a newer client must keep working.
var jsonBody = answer.Body{Limit: 16 << 10, Lenient: true}

// errorShape is the contract's error answer for err.
func errorShape(err error) (int, any) {
	status, code := codeOf(err)
	return status, errorBody{Success: false, Error: code, Message: fault.Message(err)}
}

// newSurface is how the API answers. Failures of the box itself are
// logged with their cause; refusals are not (a client polling with a
// revoked token would fill the log).
func newSurface(log *slog.Logger) answer.Surface {
	return answer.Surface{Body: jsonBody, Shape: errorShape, Log: log, Name: "home-automation"}
}

var okBody = map[string]bool{"success": true}

// fail answers err (answer.Surface.Fail).
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.surface.Fail(w, r, err)
}
