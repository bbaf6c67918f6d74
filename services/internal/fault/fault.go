// Package fault is the box's one vocabulary of error kinds. Packages wrap a
// Kind into their errors; only the serving layers (the local API on :8090,
// the home-automation API on :8443, daemon sockets) turn a kind into a status
// code. A library never picks an HTTP status, and a handler never guesses one
// from an error's text.
package fault

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Kind classifies what went wrong from the caller's point of view. A Kind is
// an error itself, so errors.Is(err, fault.Invalid) asks for the kind.
type Kind string

func (k Kind) Error() string { return string(k) }

const (
	// Internal is a failure of the box itself; the default for errors that
	// carry no kind.
	Internal Kind = "internal"
	// Invalid: the request is malformed or names a value out of range.
	Invalid Kind = "invalid"
	// Unauthorized: a login is required and missing or wrong.
	Unauthorized Kind = "unauthorized"
	// Forbidden: the caller is known but not allowed (a rule, an origin).
	Forbidden Kind = "forbidden"
	// NotFound: the thing named does not exist.
	NotFound Kind = "not found"
	// Conflict: well formed, but not possible in the current state.
	Conflict Kind = "conflict"
	// TooLarge: the request or upload exceeds a size limit.
	TooLarge Kind = "too large"
	// Unsupported: the content is of a type the box does not take.
	Unsupported Kind = "unsupported"
	// Busy: too many requests or a full queue; try again later.
	Busy Kind = "busy"
	// Unavailable: a part of the box is not running or not reachable.
	Unavailable Kind = "unavailable"
	// Upstream: something outside the box that the request needed (an
	// access point, a remote server) refused or did not answer; the box
	// itself is fine and the request was well formed.
	Upstream Kind = "upstream"
)

// Kinds lists every kind, for tables that must cover them all.
func Kinds() []Kind {
	return []Kind{Internal, Invalid, Unauthorized, Forbidden, NotFound, Conflict, TooLarge, Unsupported, Busy, Unavailable, Upstream}
}

// Error is an error of a kind with a message meant for the caller, and an
// optional cause meant for the log.
type Error struct {
	Kind Kind
	// Msg is what a client may be told: it names the failure, never an
	// internal path or a peer's address.
	Msg string
	// Cause is the underlying error, for logs and errors.Is; it is not shown
	// to clients of server-side failures.
	Cause error
	// RetryAfter, when set, tells a client when trying again makes sense.
	RetryAfter time.Duration
	// Code, when set, names this failure for programs: a stable word
	// ("wrong_password") a client may translate, where Msg is English
	// and may change. See CodeOf.
	Code string
}

// Coded sets e's Code and returns e, for a package's sentinel errors.
func (e *Error) Coded(code string) *Error {
	e.Code = code
	return e
}

// CodeOf is err's code for programs: the Code of the outermost *Error in
// its chain (the one that decides the kind), else its kind's, with "_"
// for spaces ("not_found").
func CodeOf(err error) string {
	var fe *Error
	if errors.As(err, &fe) && fe.Code != "" {
		return fe.Code
	}
	return KindCode(KindOf(err))
}

// KindCode is k's code for programs: "invalid", "not_found", "too_large".
func KindCode(k Kind) string { return strings.ReplaceAll(string(k), " ", "_") }

func (e *Error) Error() string {
	if e.Cause == nil {
		return e.Msg
	}
	return e.Msg + ": " + e.Cause.Error()
}

// Unwrap lets errors.Is find both the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}

// New returns an error of kind k with a formatted message.
func New(k Kind, format string, a ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, a...)}
}

// Wrap returns an error of kind k with msg for the caller and err as the
// cause. It returns nil for a nil err.
func Wrap(k Kind, err error, msg string) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Msg: msg, Cause: err}
}

// Retry returns an error of kind k that tells the client to come back after d.
func Retry(k Kind, d time.Duration, format string, a ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, a...), RetryAfter: d}
}

// KindOf returns the kind of the outermost *Error or Kind in err's chain, or
// Internal when it has none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	var k Kind
	if errors.As(err, &k) {
		return k
	}
	return Internal
}

// Message is what a client may be told about err. A refused request (any
// kind but Internal, Unavailable and Upstream) hears the whole message,
// which names what was wrong with it; a failure of the box or of a peer
// hears only the message of the outermost *Error, so causes (paths, socket
// addresses, library internals) stay in the log.
func Message(err error) string {
	switch KindOf(err) {
	case Internal, Unavailable, Upstream:
		var e *Error
		if errors.As(err, &e) {
			return e.Msg
		}
		if KindOf(err) == Unavailable {
			return "temporarily unavailable"
		}
		return "internal error"
	}
	return err.Error()
}

// RetryAfterOf returns the first RetryAfter set in err's chain, or 0.
func RetryAfterOf(err error) time.Duration {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return 0
		}
		if e.RetryAfter > 0 {
			return e.RetryAfter
		}
		err = e.Cause
	}
	return 0
}

// Wait is how long a client should wait before trying err again: the
// RetryAfter set in its chain, and at least a second for the kinds that
// mean "not now" (Busy, Unavailable); 0 for kinds where waiting does not
// help.
func Wait(err error) time.Duration {
	d := RetryAfterOf(err)
	if k := KindOf(err); k == Busy || k == Unavailable {
		d = max(d, time.Second)
	}
	return d
}

// RetryAfterHeader is a Retry-After header's value for d: whole seconds,
// rounded up; "" for no wait.
func RetryAfterHeader(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// HTTPStatus is the one table from kinds to HTTP statuses, for every
// serving layer: playerd's local API, the daemons' sockets, and the
// home-automation API, which keeps its own snake_case codes beside it.
// Libraries never call it.
func HTTPStatus(k Kind) int {
	switch k {
	case Invalid:
		return http.StatusBadRequest
	case Unauthorized:
		return http.StatusUnauthorized
	case Forbidden:
		return http.StatusForbidden
	case NotFound:
		return http.StatusNotFound
	case Conflict:
		return http.StatusConflict
	case TooLarge:
		return http.StatusRequestEntityTooLarge
	case Unsupported:
		return http.StatusUnsupportedMediaType
	case Busy:
		return http.StatusTooManyRequests
	case Unavailable:
		return http.StatusServiceUnavailable
	case Upstream:
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}
