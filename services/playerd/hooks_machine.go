//go:build !soaktest

package main

import "log/slog"

// machineHooks are the machine itself: the production binary puts nothing
// in its place. A soak build (-tags soaktest, soaktest.go) puts in a card
// reader and a screen the soak driver reaches over a socket.
func machineHooks(*slog.Logger) (hooks, error) { return hooks{}, nil }
