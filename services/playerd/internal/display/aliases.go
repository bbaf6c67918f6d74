package display

import "github.com/storybox/storybox/services/playerd/internal/message"

// The message types under the names the screen's callers know them by.
type (
	MessageRequest = message.Request
	Message        = message.Message
	MessageEvent   = message.Event
)
