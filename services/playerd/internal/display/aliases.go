package display

import (
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/onscreen"
)

// The message types under the names the screen's callers know them by.
type (
	MessageRequest = message.Request
	Message        = message.Message
	MessageEvent   = message.Event
)

// UIState is what the screen shows, for clients that mirror the box.
type UIState = onscreen.UIState
