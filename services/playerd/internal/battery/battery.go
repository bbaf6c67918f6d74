// Package battery is what the core knows of the battery: its level as the
// battery board's service reports it, a change of level, and the sound
// that warns of a low one. The board's service itself is reached by the
// battery surface (package hat), which feeds the core each change.
package battery

// Level is the battery level; the empty Level means unknown.
type Level string

// Levels, as hatd reports them.
const (
	OK       Level = "ok"
	Low      Level = "low"
	Critical Level = "critical"
)

// Change is one confirmed transition of the battery level.
type Change struct {
	From, To Level
	Percent  *int
}
