package pairing

import (
	"slices"

	"github.com/storybox/storybox/services/internal/fault"
)

// Scope is one permission of a paired client.
type Scope string

// The contract's scopes. Admin is reserved: the box implements no admin
// route for tokens, so it is accepted in a request and never granted.
const (
	Read    Scope = "read"    // info, state, cover, screenshot, outputs, update, events
	Control Scope = "control" // playback and volume, output selection
	Notify  Scope = "notify"  // speech and on-screen messages
	Power   Scope = "power"   // reboot and power-off, never implied by control
	Admin   Scope = "admin"
)

// Grantable are the scopes a parent can allow, in display order.
var Grantable = []Scope{Read, Control, Notify, Power}

// DefaultScopes are allowed when the parent names none, and requested
// when a client names none: the contract's default.
var DefaultScopes = []Scope{Read, Control}

// ParseScopes checks names and returns them in Grantable order without
// repeats. Admin is kept out. An unknown name is fault.Invalid.
func ParseScopes(names []string) ([]Scope, error) {
	var out []Scope
	for _, n := range names {
		s := Scope(n)
		switch {
		case s == Admin:
		case slices.Contains(Grantable, s):
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		default:
			return nil, fault.New(fault.Invalid, "unknown scope %q (known: read, control, notify, power, admin)", n)
		}
	}
	slices.SortFunc(out, func(a, b Scope) int { return slices.Index(Grantable, a) - slices.Index(Grantable, b) })
	return out, nil
}

// intersect keeps the scopes of want that allowed has, in want's order.
func intersect(want, allowed []Scope) []Scope {
	var out []Scope
	for _, s := range want {
		if slices.Contains(allowed, s) {
			out = append(out, s)
		}
	}
	return out
}

// Strings is the scopes as JSON strings; never nil, so JSON shows [].
func Strings(ss []Scope) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, string(s))
	}
	return out
}

// EnableResult is the answer to opening the pairing window, on the v1 API
// and the local admin API alike.
type EnableResult struct {
	Success   bool     `json:"success"`
	ExpiresIn int      `json:"expires_in"`
	Scopes    []string `json:"scopes"`
}

// EnableNamed opens the pairing window for the scopes named (nil: the
// default), as both APIs take them.
func (m *Manager) EnableNamed(names []string) (EnableResult, error) {
	scopes := DefaultScopes
	if names != nil {
		var err error
		if scopes, err = ParseScopes(names); err != nil {
			return EnableResult{}, err
		}
		if len(scopes) == 0 {
			return EnableResult{}, fault.New(fault.Invalid, "scopes must name at least one of read, control, notify, power")
		}
	}
	if _, err := m.Enable(scopes); err != nil {
		return EnableResult{}, err
	}
	return EnableResult{Success: true, ExpiresIn: m.Status().WindowLeft, Scopes: Strings(scopes)}, nil
}
