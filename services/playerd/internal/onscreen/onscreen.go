// Package onscreen is what the touch screen shows, as the rest of the box
// sees it: the message on it (owned by the core's board, package message)
// and the state clients mirror. The screen (package display) shows them;
// the APIs ask the core's screen facet (box.Screen), never the screen
// itself.
package onscreen

import "github.com/storybox/storybox/services/playerd/internal/message"

// The message types under the names the screen's facet uses.
type (
	MessageRequest = message.Request
	Message        = message.Message
)

// UIState is what the screen shows, for clients that mirror the box
// (GET /api/ui-state).
type UIState struct {
	Screen     string   `json:"screen"` // "home" or "playing"
	Message    *Message `json:"message"`
	BatteryLow bool     `json:"battery_low"`
}
