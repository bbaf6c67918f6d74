//go:build tools

// Package tools pins gok, the gokrazy image builder. `go install …@version`
// cannot be used: it asks the module proxy for a version list it refuses.
// The Makefile builds gok from this module instead.
package tools

import _ "github.com/gokrazy/tools/cmd/gok"
