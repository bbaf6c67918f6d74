//go:build !linux

package measure

// lowerPriority is left to the pacing alone where threads have no
// priority of their own.
func lowerPriority() error { return nil }
