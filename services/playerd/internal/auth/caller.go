package auth

import (
	"context"
	"net/netip"
)

// Via is the way a request reached the box.
type Via string

const (
	// Loopback: a program on the box itself.
	Loopback Via = "loopback"
	// Network: anyone else who can reach the port: the home network.
	Network Via = "network"
	// Touch: the box's own touch screen, that is the child.
	Touch Via = "touch"
	// Internal: the box acting on its own: the parental rules ending
	// playback, a critical battery pausing it. Never an outside request.
	Internal Via = "internal"
	// HomeAutomation: a paired client of the home-automation API (:8443)
	// with a valid token; Caller.Client names it.
	HomeAutomation Via = "home-automation"
	// Card: a card placed on a reader: the child.
	Card Via = "card"
	// Button: a button on the box or a media key: the child.
	Button Via = "button"
)

// Caller is who is asking. Middleware builds one for every request from
// what the connection proves (its source address, a session cookie);
// handlers and rules ask the caller, never the raw request. Paired
// home-automation clients, the touch screen and cards add their own Via.
type Caller struct {
	Via  Via
	Addr netip.Addr // the client's address, for per-address limits
	// Admin: the request carries a valid administrator session.
	Admin bool
	// Client is the paired client's id when Via is HomeAutomation.
	Client string
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller in ctx. Without one it is an anonymous
// network caller: the least trusted kind.
func CallerFrom(ctx context.Context) Caller {
	if c, ok := ctx.Value(callerKey{}).(Caller); ok {
		return c
	}
	return Caller{Via: Network}
}

// CallerAt is the caller of a connection from remoteAddr ("ip:port", as
// net/http reports it), before any credential is looked at.
func CallerAt(remoteAddr string) Caller {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return Caller{Via: Network}
	}
	addr := ap.Addr().Unmap().WithZone("")
	if addr.IsLoopback() {
		return Caller{Via: Loopback, Addr: addr}
	}
	return Caller{Via: Network, Addr: addr}
}
