package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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

// maxSocketPath is what fits in a Unix socket address on Linux (sun_path
// is 108 bytes with the terminating NUL).
const maxSocketPath = 107

// Validate checks the configuration without opening anything. What it
// rejects cannot work on any later attempt either, so main exits with
// gokrazy's do-not-restart status. A missing speech program, framebuffer or
// touch device is not a configuration error: playerd runs without them.
func (c Config) Validate() error {
	_, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("-listen %q: want HOST:PORT or :PORT", c.Listen)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("-listen %q: port: %v", c.Listen, err)
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
	if len(c.Hat) > maxSocketPath {
		return fmt.Errorf("-hat %q: longer than a Unix socket path may be (%d bytes)", c.Hat, maxSocketPath)
	}
	if len(c.Net) > maxSocketPath {
		return fmt.Errorf("-net %q: longer than a Unix socket path may be (%d bytes)", c.Net, maxSocketPath)
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
		_, port, err := net.SplitHostPort(c.HAListen)
		if err != nil {
			return fmt.Errorf("-ha-listen %q: want HOST:PORT or :PORT, or empty for off", c.HAListen)
		}
		if _, err := net.LookupPort("tcp", port); err != nil {
			return fmt.Errorf("-ha-listen %q: port: %v", c.HAListen, err)
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
	return checkAdminConfig(c)
}

// flagSet binds playerd's flags to c, each defaulting to its environment
// variable when that is set.
func flagSet(c *Config) *flag.FlagSet {
	fs := flag.NewFlagSet("playerd", flag.ContinueOnError)
	fs.StringVar(&c.Listen, "listen", env("PLAYERD_LISTEN", ":8090"), "address of the HTTP API (env PLAYERD_LISTEN)")
	fs.StringVar(&c.Media, "media", env("PLAYERD_MEDIA", "/perm/media"), "library root: folders of audio files (env PLAYERD_MEDIA)")
	fs.StringVar(&c.Data, "data", env("PLAYERD_DATA", "/perm/playerd"), "state directory: settings, queue, resume positions (env PLAYERD_DATA)")
	fs.StringVar(&c.Output, "output", env("PLAYERD_OUTPUT", "null"), "audio output: null, wav:FILE or alsa[:CARD,DEV] (env PLAYERD_OUTPUT)")
	fs.StringVar(&c.Hat, "hat", env("PLAYERD_HAT", ""), "Unix socket of hatd, the battery board service; empty: none (env PLAYERD_HAT)")
	fs.StringVar(&c.Net, "net", env("PLAYERD_NET", ""), "Unix socket of netd, the Wi-Fi service; empty: none (env PLAYERD_NET)")
	fs.StringVar(&c.SpeechProgram, "speech-program", env("PLAYERD_SPEECH_PROGRAM", speech.DefaultProgram), "speech program: text on stdin, WAV on stdout; missing: no voice (env PLAYERD_SPEECH_PROGRAM)")
	fs.StringVar(&c.SpeechData, "speech-data", env("PLAYERD_SPEECH_DATA", speech.DefaultDataDir), "voice data of the speech program (env PLAYERD_SPEECH_DATA)")
	fs.StringVar(&c.SpeechRemote, "speech-remote", env("PLAYERD_SPEECH_REMOTE", ""), "URL of a speech server on the home network, tried before the local voice; empty: none (env PLAYERD_SPEECH_REMOTE)")
	fs.StringVar(&c.Display.FB, "fb", env("PLAYERD_FB", "auto"), "framebuffer device; auto: /dev/fb0 if present, none: headless (env PLAYERD_FB)")
	fs.StringVar(&c.Display.Console, "console", env("PLAYERD_CONSOLE", "/dev/tty0"), "console put in graphics mode while drawing; empty: leave it alone (env PLAYERD_CONSOLE)")
	fs.StringVar(&c.Display.Touch, "touch", env("PLAYERD_TOUCH", "auto"), "touch input: auto, none or /dev/input/eventN (env PLAYERD_TOUCH)")
	fs.StringVar(&c.Display.TouchAxes, "touch-axes", env("PLAYERD_TOUCH_AXES", ""), "touch panel orientation: comma-separated swap, invert-x, invert-y (env PLAYERD_TOUCH_AXES)")
	fs.StringVar(&c.Input, "input", env("PLAYERD_INPUT", "auto"), "card readers, media keys and GPIO buttons: auto or none; which devices count is in the admin API (env PLAYERD_INPUT)")
	fs.StringVar(&c.Hostname, "hostname", env("PLAYERD_HOSTNAME", ""), "the box's host name; the API also answers to NAME.local; empty: the system's (env PLAYERD_HOSTNAME)")
	c.AllowHosts = splitList(env("PLAYERD_ALLOW_HOST", ""))
	fs.Func("allow-host", "further host names the API answers to, comma-separated, e.g. a router's DNS name (env PLAYERD_ALLOW_HOST)", func(v string) error {
		c.AllowHosts = splitList(v)
		return nil
	})
	fs.StringVar(&c.AdminResetFile, "admin-reset-file", env("PLAYERD_ADMIN_RESET_FILE", ""), "a file that, when present, removes the administrator password; only physical access may create it; empty: none (env PLAYERD_ADMIN_RESET_FILE)")
	fs.StringVar(&c.HAListen, "ha-listen", env("PLAYERD_HA_LISTEN", ":8443"), "address of the home-automation API v1 (HTTPS, Home Assistant); empty: off (env PLAYERD_HA_LISTEN)")
	fs.BoolVar(&c.HAAdvertise, "ha-mdns", env("PLAYERD_HA_MDNS", "true") == "true", "announce the home-automation API over mDNS as _mupibox._tcp (env PLAYERD_HA_MDNS)")
	fs.StringVar(&c.MPRIS, "mpris", env("PLAYERD_MPRIS", "off"), "session: desktop media controls and playerctl see the box (MPRIS on the D-Bus session bus); off: not (env PLAYERD_MPRIS)")
	c.Procs = 1
	if v, ok := os.LookupEnv("PLAYERD_PROCS"); ok {
		c.Procs = parseProcs(v)
	}
	fs.Func("procs", "threads running Go code at once (GOMAXPROCS); 0: one per core. One is the box's: its work is one player goroutine and short requests, and every further thread is woken to look for work each time one goroutine wakes, which cost 40% of the CPU per status request and 10-15% while playing (docs/performance.md) (env PLAYERD_PROCS, default 1)", func(v string) error {
		if c.Procs = parseProcs(v); c.Procs < 0 {
			return errors.New("want a whole number, 0 or more")
		}
		return nil
	})
	fs.StringVar(&c.MountBoot, "mount-boot", env("PLAYERD_MOUNT_BOOT", ""), "mount the SD card's boot partition read-only at this directory, for -admin-reset-file (gokrazy); empty: don't (env PLAYERD_MOUNT_BOOT)")
	return fs
}

// parseFlags reads the command line. Errors come back as one line and are
// not printed; -h prints the flags to help and returns flag.ErrHelp.
func parseFlags(args []string, help io.Writer) (Config, error) {
	c := Config{Version: version}
	fs := flagSet(&c)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(help)
			fmt.Fprintln(help, "usage: playerd [flags]")
			fs.PrintDefaults()
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return c, nil
}

// parseProcs reads -procs; -1 stands for a value that is not 0 or more.
func parseProcs(v string) int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return -1
	}
	return n
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

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

// checkAdminConfig checks the administration part of the configuration.
// The reset file must not be anywhere the API can write (the media library
// takes uploads, the data directory restores backups): network access
// alone must never reset the password.
func checkAdminConfig(c Config) error {
	for _, n := range c.AllowHosts {
		if err := auth.CheckHostName(n); err != nil {
			return fmt.Errorf("-allow-host: %w", err)
		}
	}
	if c.AdminResetFile == "" {
		return nil
	}
	for _, dir := range []string{c.Media, c.Data} {
		if inside(c.AdminResetFile, dir) {
			return fmt.Errorf("-admin-reset-file %s is inside %s, which the API writes to", c.AdminResetFile, dir)
		}
	}
	return nil
}

func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return true
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
