// playerd is the storybox player: the local HTTP API on :8090, the library,
// the player engine, speech and the display.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/speech"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// Config is everything playerd is told at start.
type Config struct {
	Listen  string
	Media   string
	Data    string
	Output  string
	Hat     string
	Version string
	// The speech program, its voice data, and an optional speech server.
	SpeechProgram, SpeechData, SpeechRemote string
	// The screen and its touch panel: see newDisplay.
	FB, Console, Touch, TouchAxes string
	// PowerOff switches the box off on a critical battery; nil means
	// power.System(power.OnGokrazy()). Tests inject their own.
	PowerOff power.Func
	// Listener, when set, serves the API instead of listening on Listen;
	// run closes it. Tests pass one already bound to a free port.
	Listener net.Listener
	// The names the API answers to besides IP addresses and localhost:
	// Hostname (empty: the system's) with ".local", and AllowHosts.
	Hostname   string
	AllowHosts []string
	// AdminResetFile, when it appears, removes the administrator password;
	// MountBoot is where to mount the SD card's boot partition for it.
	AdminResetFile, MountBoot string
	// Tests only: cheap argon2 and a clock they move. Zero values:
	// auth.DefaultParams and time.Now.
	PasswordParams auth.Params
	AuthClock      func() time.Time
}

func parseFlags(args []string) (Config, error) {
	fs := flag.NewFlagSet("playerd", flag.ContinueOnError)
	c := Config{Version: version}
	fs.StringVar(&c.Listen, "listen", env("PLAYERD_LISTEN", ":8090"), "address of the HTTP API (env PLAYERD_LISTEN)")
	fs.StringVar(&c.Media, "media", env("PLAYERD_MEDIA", "/perm/media"), "library root: folders of audio files (env PLAYERD_MEDIA)")
	fs.StringVar(&c.Data, "data", env("PLAYERD_DATA", "/perm/playerd"), "state directory: settings, queue, resume positions (env PLAYERD_DATA)")
	fs.StringVar(&c.Output, "output", env("PLAYERD_OUTPUT", "null"), "audio output: null, wav:FILE or alsa[:CARD,DEV] (env PLAYERD_OUTPUT)")
	fs.StringVar(&c.Hat, "hat", env("PLAYERD_HAT", ""), "Unix socket of hatd, the battery board service; empty: none (env PLAYERD_HAT)")
	fs.StringVar(&c.SpeechProgram, "speech-program", env("PLAYERD_SPEECH_PROGRAM", speech.DefaultProgram), "speech program: text on stdin, WAV on stdout (env PLAYERD_SPEECH_PROGRAM)")
	fs.StringVar(&c.SpeechData, "speech-data", env("PLAYERD_SPEECH_DATA", speech.DefaultDataDir), "voice data of the speech program (env PLAYERD_SPEECH_DATA)")
	fs.StringVar(&c.SpeechRemote, "speech-remote", env("PLAYERD_SPEECH_REMOTE", ""), "URL of a speech server on the home network, tried before the local voice; empty: none (env PLAYERD_SPEECH_REMOTE)")
	fs.StringVar(&c.FB, "fb", env("PLAYERD_FB", "auto"), "framebuffer device; auto: /dev/fb0 if present, none: headless (env PLAYERD_FB)")
	fs.StringVar(&c.Console, "console", env("PLAYERD_CONSOLE", "/dev/tty0"), "console put in graphics mode while drawing; empty: leave it alone (env PLAYERD_CONSOLE)")
	fs.StringVar(&c.Touch, "touch", env("PLAYERD_TOUCH", "auto"), "touch input: auto, none or /dev/input/eventN (env PLAYERD_TOUCH)")
	fs.StringVar(&c.TouchAxes, "touch-axes", env("PLAYERD_TOUCH_AXES", ""), "touch panel orientation: comma-separated swap, invert-x, invert-y (env PLAYERD_TOUCH_AXES)")
	fs.StringVar(&c.Hostname, "hostname", env("PLAYERD_HOSTNAME", ""), "the box's host name; the API also answers to NAME.local; empty: the system's (env PLAYERD_HOSTNAME)")
	allowHosts := fs.String("allow-host", env("PLAYERD_ALLOW_HOST", ""), "further host names the API answers to, comma-separated, e.g. a router's DNS name (env PLAYERD_ALLOW_HOST)")
	fs.StringVar(&c.AdminResetFile, "admin-reset-file", env("PLAYERD_ADMIN_RESET_FILE", ""), "a file that, when present, removes the administrator password; only physical access may create it; empty: none (env PLAYERD_ADMIN_RESET_FILE)")
	fs.StringVar(&c.MountBoot, "mount-boot", env("PLAYERD_MOUNT_BOOT", ""), "mount the SD card's boot partition read-only at this directory, for -admin-reset-file (gokrazy); empty: don't (env PLAYERD_MOUNT_BOOT)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := checkAdminFlags(&c, *allowHosts); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return c, nil
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "playerd:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("playerd stopped", "error", err)
		os.Exit(1)
	}
}
