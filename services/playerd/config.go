package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/speech"
)

// Config is everything playerd is told at start: its flags (or their
// environment variables), nothing else. What tests put in place of the
// machine is in hooks.
type Config struct {
	// Procs is how many threads run Go code at once (GOMAXPROCS); 0 leaves
	// Go's choice, one per core. See the -procs flag.
	Procs   int
	Listen  string
	Media   string
	Data    string
	Output  string
	Hat     string
	Net     string // netd's socket; empty: no Wi-Fi service
	Sync    string // syncd's socket; empty: no household of boxes
	Version string
	// The speech program, its voice data, and an optional speech server.
	SpeechProgram, SpeechData, SpeechRemote string
	// The screen and its touch panel.
	Display display.Devices
	// Input is "auto" (card readers and media keys in /dev/input, buttons
	// on /dev/gpiochip*) or "none"; "" is none.
	Input string
	// The names the API answers to besides IP addresses and localhost:
	// Hostname (empty: the system's) with ".local", and AllowHosts.
	Hostname   string
	AllowHosts []string
	// AdminResetFile, when it appears, removes the administrator password;
	// MountBoot is where to mount the SD card's boot partition for it.
	AdminResetFile, MountBoot string
	// HAListen is the address of the home-automation API (TLS); empty:
	// off. HAAdvertise announces it over mDNS.
	HAListen    string
	HAAdvertise bool
	// MPRIS is "session" to show the box to the desktop session's media
	// controls (D-Bus), "off" (or empty) otherwise. A development
	// machine's; the box has no D-Bus.
	MPRIS string
}

// Validate checks the configuration without opening anything. What it
// rejects cannot work on any later attempt either, so main exits with
// gokrazy's do-not-restart status. A missing speech program, framebuffer or
// touch device is not a configuration error: playerd runs without them.
func (c Config) Validate() error {
	if err := checkListen("-listen", c.Listen); err != nil {
		return err
	}
	if c.Procs < 0 {
		return errors.New("-procs (or PLAYERD_PROCS): want a whole number, 0 or more")
	}
	if c.Media == "" {
		return errors.New("-media is empty")
	}
	if c.Data == "" {
		return errors.New("-data is empty")
	}
	if _, err := output.Parse(c.Output); err != nil {
		return fmt.Errorf("-output: %w", err)
	}
	for name, path := range map[string]string{"-hat": c.Hat, "-net": c.Net, "-sync": c.Sync} {
		if path == "" {
			continue
		}
		if err := daemon.CheckSocket(name, path); err != nil {
			return err
		}
	}
	if c.SpeechRemote != "" {
		u, err := url.Parse(c.SpeechRemote)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("-speech-remote %q: want an http:// or https:// URL", c.SpeechRemote)
		}
	}
	if err := c.Display.Validate(); err != nil {
		return err
	}
	if c.HAListen != "" {
		if err := checkListen("-ha-listen", c.HAListen); err != nil {
			return fmt.Errorf("%w, or empty for off", err)
		}
	}
	if c.Input != "" && c.Input != "auto" && c.Input != "none" {
		return fmt.Errorf("-input %q: want auto or none", c.Input)
	}
	switch c.MPRIS {
	case "", "off", "session":
	default:
		return fmt.Errorf("-mpris %q: want session or off", c.MPRIS)
	}
	for _, n := range c.AllowHosts {
		if err := auth.CheckHostName(n); err != nil {
			return fmt.Errorf("-allow-host: %w", err)
		}
	}
	if c.AdminResetFile != "" {
		if err := auth.CheckResetFile(c.AdminResetFile, c.Media, c.Data); err != nil {
			return fmt.Errorf("-admin-reset-file: %w", err)
		}
	}
	return nil
}

// checkListen accepts HOST:PORT and :PORT.
func checkListen(flagName, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: want HOST:PORT or :PORT", flagName, addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%s %q: port: %v", flagName, addr, err)
	}
	return nil
}

// flags binds playerd's flags to c; daemon.Parse also reads each from its
// PLAYERD_ variable (-speech-program: PLAYERD_SPEECH_PROGRAM).
func flags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Listen, "listen", ":8090", "address of the HTTP API")
	fs.StringVar(&c.Media, "media", "/perm/media", "library root: folders of audio files")
	fs.StringVar(&c.Data, "data", "/perm/playerd", "state directory: settings, queue, resume positions")
	fs.StringVar(&c.Output, "output", "null", "audio output: null, wav:FILE or alsa[:CARD,DEV]")
	fs.StringVar(&c.Hat, "hat", "", "Unix socket of hatd, the battery board service; empty: none")
	fs.StringVar(&c.Net, "net", "", "Unix socket of netd, the Wi-Fi service and mDNS responder; empty: none")
	fs.StringVar(&c.Sync, "sync", "", "Unix socket of syncd, the household's sync service (Syncthing); empty: none, the box shares nothing")
	fs.StringVar(&c.SpeechProgram, "speech-program", speech.DefaultProgram, "speech program: text on stdin, WAV on stdout; missing: no voice")
	fs.StringVar(&c.SpeechData, "speech-data", speech.DefaultDataDir, "voice data of the speech program")
	fs.StringVar(&c.SpeechRemote, "speech-remote", "", "URL of a speech server on the home network, tried before the local voice; empty: none")
	fs.StringVar(&c.Display.FB, "fb", "auto", "framebuffer device; auto: /dev/fb0 if present, none: headless")
	fs.StringVar(&c.Display.Console, "console", "/dev/tty0", "console put in graphics mode while drawing; empty: leave it alone")
	fs.StringVar(&c.Display.Touch, "touch", "auto", "touch input: auto, none or /dev/input/eventN")
	fs.StringVar(&c.Display.TouchAxes, "touch-axes", "", "touch panel orientation: comma-separated swap, invert-x, invert-y")
	fs.StringVar(&c.Input, "input", "auto", "card readers, media keys and GPIO buttons: auto or none; which devices count is in the admin API")
	fs.StringVar(&c.Hostname, "hostname", "", "the box's host name; the API also answers to NAME.local; empty: the system's")
	fs.Func("allow-host", "further host names the API answers to, comma-separated, e.g. a router's DNS name", func(v string) error {
		c.AllowHosts = splitList(v)
		return nil
	})
	fs.StringVar(&c.AdminResetFile, "admin-reset-file", "", "a file that, when present, removes the administrator password; only physical access may create it; empty: none")
	fs.StringVar(&c.HAListen, "ha-listen", ":8443", "address of the home-automation API v1 (HTTPS, Home Assistant); empty: off")
	fs.BoolVar(&c.HAAdvertise, "ha-mdns", true, "have netd announce the home-automation API over mDNS as _mupibox._tcp")
	fs.StringVar(&c.MPRIS, "mpris", "off", "session: desktop media controls and playerctl see the box (MPRIS on the D-Bus session bus); off: not")
	fs.Func("procs", "threads running Go code at once (GOMAXPROCS); 0: one per core. One is the box's: its work is one player goroutine and short requests, and every further thread is woken to look for work each time one goroutine wakes, which cost 40% of the CPU per status request and 10-15% while playing (docs/performance.md) (default 1)", func(v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return errors.New("want a whole number, 0 or more")
		}
		c.Procs = n
		return nil
	})
	fs.StringVar(&c.MountBoot, "mount-boot", "", "mount the SD card's boot partition read-only at this directory, for -admin-reset-file (gokrazy); empty: don't")
}

func splitList(v string) []string {
	var out []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
