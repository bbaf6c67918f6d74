// Package onscreen is what the touch screen shows, as clients mirror it:
// which screen, the message on it (the core's message.Board owns that) and
// the low-battery banner. The APIs ask the core's screen facet
// (box.Screen), never the screen itself.
package onscreen

import "github.com/storybox/storybox/services/playerd/internal/message"

// UIState is what the screen shows, for clients that mirror the box
// (GET /api/ui-state).
type UIState struct {
	Screen     string           `json:"screen"` // "home" or "playing"
	Message    *message.Message `json:"message"`
	BatteryLow bool             `json:"battery_low"`
}
