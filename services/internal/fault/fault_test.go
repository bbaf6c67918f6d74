package fault

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

func TestKindsThroughWrapping(t *testing.T) {
	sentinel := New(Invalid, "text is empty")
	wrapped := fmt.Errorf("speak: %w", sentinel)
	if !errors.Is(wrapped, Invalid) || !errors.Is(wrapped, sentinel) {
		t.Fatalf("errors.Is lost the kind or the sentinel: %v", wrapped)
	}
	if KindOf(wrapped) != Invalid {
		t.Errorf("KindOf = %q, want invalid", KindOf(wrapped))
	}
	if got := Message(wrapped); got != "speak: text is empty" {
		t.Errorf("Message = %q: a refused request hears the whole message", got)
	}
	if KindOf(errors.New("plain")) != Internal || KindOf(nil) != Internal {
		t.Error("an error without a kind is internal")
	}
	if KindOf(fmt.Errorf("x: %w", NotFound)) != NotFound {
		t.Error("a bare Kind in the chain counts")
	}
}

func TestServerFailuresHideTheirCause(t *testing.T) {
	cause := &os.PathError{Op: "dial", Path: "/run/storybox/hatd.sock", Err: errors.New("connection refused")}
	err := fmt.Errorf("battery: %w", Wrap(Unavailable, cause, "battery board service unavailable"))
	if got := Message(err); got != "battery board service unavailable" {
		t.Errorf("Message = %q, want the cause hidden", got)
	}
	if !errors.Is(err, Unavailable) || !errors.As(err, new(*os.PathError)) {
		t.Error("the cause and kind stay reachable for the log")
	}
	if got := Message(errors.New("open /perm/x: permission denied")); got != "internal error" {
		t.Errorf("Message of a kindless error = %q", got)
	}
	if got := Message(Wrap(Upstream, cause, "could not join the network")); got != "could not join the network" {
		t.Errorf("Message of an upstream failure = %q, want the cause hidden", got)
	}
	if got := Message(Unavailable); got != "temporarily unavailable" {
		t.Errorf("Message of a bare Unavailable = %q", got)
	}
	if Wrap(Internal, nil, "x") != nil {
		t.Error("Wrap(nil) must be nil")
	}
}

func TestRetryAfter(t *testing.T) {
	err := fmt.Errorf("login: %w", Retry(Busy, 5*time.Minute, "too many login attempts; try again later"))
	if RetryAfterOf(err) != 5*time.Minute || KindOf(err) != Busy {
		t.Errorf("RetryAfterOf = %v kind %q", RetryAfterOf(err), KindOf(err))
	}
	outer := &Error{Kind: Busy, Msg: "queue full", Cause: Retry(Busy, time.Second, "inner")}
	if RetryAfterOf(outer) != time.Second {
		t.Errorf("RetryAfterOf looks through causes: %v", RetryAfterOf(outer))
	}
	if RetryAfterOf(New(Invalid, "x")) != 0 || RetryAfterOf(errors.New("x")) != 0 {
		t.Error("no retry hint without one")
	}
}

// A client told to wait is never told to come back at once, and one that
// waiting cannot help is not told to wait.
func TestWait(t *testing.T) {
	for _, tc := range []struct {
		err    error
		wait   time.Duration
		header string
	}{
		{New(Busy, "queue full"), time.Second, "1"},
		{Wrap(Unavailable, errors.New("dial"), "hatd unavailable"), time.Second, "1"},
		{Retry(Unavailable, 7500*time.Millisecond, "restarting"), 7500 * time.Millisecond, "8"},
		{Retry(Busy, 300*time.Millisecond, "slow down"), time.Second, "1"},
		{Retry(Forbidden, time.Minute, "locked until later"), time.Minute, "60"},
		{New(Upstream, "the station did not answer"), 0, ""},
		{New(Invalid, "x"), 0, ""},
		{errors.New("x"), 0, ""},
	} {
		if got := Wait(tc.err); got != tc.wait || RetryAfterHeader(got) != tc.header {
			t.Errorf("%v: %v %q, want %v %q", tc.err, got, RetryAfterHeader(got), tc.wait, tc.header)
		}
	}
}

func TestHTTPStatus(t *testing.T) {
	for k, want := range map[Kind]int{
		Invalid: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, Conflict: 409,
		TooLarge: 413, Unsupported: 415, Busy: 429, Internal: 500, Upstream: 502, Unavailable: 503,
		Kind("something new"): 500,
	} {
		if got := HTTPStatus(k); got != want {
			t.Errorf("HTTPStatus(%q) = %d, want %d", k, got, want)
		}
	}
	for _, k := range Kinds() {
		if k != Internal && HTTPStatus(k) == 500 {
			t.Errorf("kind %q has no status of its own", k)
		}
	}
}

func TestCodeOf(t *testing.T) {
	coded := New(Invalid, "invalid password").Coded("wrong_password")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{coded, "wrong_password"},
		{fmt.Errorf("login: %w", coded), "wrong_password"},
		{Wrap(Busy, coded, "try later"), "busy"}, // the outer error decides
		{New(NotFound, "no such folder"), "not_found"},
		{New(TooLarge, "too big"), "too_large"},
		{errors.New("plain"), "internal"},
		{Unavailable, "unavailable"},
	} {
		if got := CodeOf(tc.err); got != tc.want {
			t.Errorf("CodeOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
