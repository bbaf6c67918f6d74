package input

import "github.com/storybox/storybox/services/playerd/internal/wiring"

// The wiring and the status are the core's (package wiring): the admin
// API changes the one and reads the other there. These names keep the
// surface's code short.
type (
	Wiring       = wiring.Wiring
	Match        = wiring.Match
	GPIO         = wiring.GPIO
	Button       = wiring.Button
	DeviceStatus = wiring.DeviceStatus
	GPIOStatus   = wiring.GPIOStatus
	Status       = wiring.Status
)

// Button actions.
const (
	BtnToggle      = wiring.BtnToggle
	BtnPlay        = wiring.BtnPlay
	BtnPause       = wiring.BtnPause
	BtnStop        = wiring.BtnStop
	BtnNext        = wiring.BtnNext
	BtnPrevious    = wiring.BtnPrevious
	BtnVolumeUp    = wiring.BtnVolumeUp
	BtnVolumeDown  = wiring.BtnVolumeDown
	BtnPowerOff    = wiring.BtnPowerOff
	BtnShuffle     = wiring.BtnShuffle
	BtnRepeat      = wiring.BtnRepeat
	BtnSeekBack    = wiring.BtnSeekBack
	BtnSeekForward = wiring.BtnSeekForward
	BtnCalm        = wiring.BtnCalm
)
