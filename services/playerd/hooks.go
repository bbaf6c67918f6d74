package main

import (
	"net"
	"net/netip"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/power"
)

// hooks are what tests put in place of the machine. The zero value is the
// machine itself: run uses none.
type hooks struct {
	// clock is the one time of the box: sessions and the lockout, pairing
	// and certificates, card reads, the parental rules, the podcast
	// refresh and the idle time.
	clock clock.Clock
	// certCheck paces the home-automation certificate's checks instead of
	// every haserve.CheckEvery, so a test that steps the clock can ask for one;
	// certAddrs are the addresses the certificate is for instead of the
	// machine's (which other programs change under a test).
	certCheck <-chan time.Time
	certAddrs func() ([]netip.Addr, error)
	// listener and haListener serve the two APIs instead of listening on
	// the configured addresses; run closes them.
	listener, haListener net.Listener
	// powerOff and reboot observe a power request instead of switching.
	powerOff, reboot power.Func
	// passwordParams make argon2 cheap.
	passwordParams auth.Params
	// screen receives the frames a framebuffer would.
	screen display.Screen
	// touch opens a touch panel in place of -touch's, at the start and
	// at each restart of the screen.
	touch func() display.TouchSource
	// inputDevices and gpio are input devices and GPIO lines of the test's
	// own (used even with -input none); inputRescan is how often devices
	// are looked for (zero: 1 s).
	inputDevices input.Devices
	gpio         input.GPIOOpener
	inputRescan  time.Duration
	// uploads bounds uploads to the library (zero: the library's limits).
	uploads library.Limits
	// allowLoopback lets stations, feeds and covers be fetched from
	// loopback and link-local addresses: the tests' servers listen on
	// 127.0.0.1, and the box never fetches from itself on a parent's word.
	allowLoopback bool
	// streamReadTimeout is how long a silent server may stall (zero: the
	// streams' default, 10 s).
	streamReadTimeout time.Duration
	// holdScan holds the library scans' file reads until it is closed, so
	// a test sees the box while its first scan runs.
	holdScan <-chan struct{}
	// headphones are the sound cards and their uevents in place of the
	// machine's, and what plays to the headphones found.
	headphones box.HeadphoneHooks
	// onStart is handed the running box once everything is started, for
	// tests that drive a part directly (the touch screen).
	onStart func(*running)
}

// running is the box as onStart sees it.
type running struct {
	core    *box.Box
	display *display.Display
}
