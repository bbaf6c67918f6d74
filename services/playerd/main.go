// playerd is the storybox player: the local HTTP API on :8090, the library,
// the player engine, speech and the display.
//
// Every flag can also be set by the environment variable named in its help.
// A configuration that cannot work (a malformed flag, -output or -listen)
// ends playerd with status 125, which tells gokrazy not to restart it.
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	// The image has no /usr/share/zoneinfo; time zones (the parental rules'
	// windows) come from the binary.
	_ "time/tzdata"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// exitNoRestart is gokrazy's "do not restart" status: restarting with the
// same flags every second would only repeat the same error.
const exitNoRestart = 125

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := start(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// start is main without the process around it: it logs to stderr and
// returns the exit status.
func start(ctx context.Context, args []string, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		log.Error("configuration unusable, not restarting", "error", err)
		return exitNoRestart
	}
	if cfg.Procs > 0 {
		runtime.GOMAXPROCS(cfg.Procs)
	}
	if err := run(ctx, cfg, log); err != nil {
		log.Error("playerd stopped", "error", err)
		return 1
	}
	return 0
}
