package display

import "github.com/storybox/storybox/services/playerd/internal/onscreen"

// A message and the mirrored state are the box's (package onscreen): the
// APIs post and read them through the core, which hands them here.
type (
	MessageRequest = onscreen.MessageRequest
	Message        = onscreen.Message
	UIState        = onscreen.UIState
)
