// playerd is the storybox player: the local HTTP API on :8090, the library,
// the player engine, speech and the display.
//
// Every flag can also be set by the environment variable named in its help.
// A configuration that cannot work (a malformed flag, -output or -listen)
// ends playerd with status 125, which tells gokrazy not to restart it.
package main

import (
	"context"
	"log/slog"
	"runtime"

	"github.com/storybox/storybox/services/internal/daemon"

	// The image has no /usr/share/zoneinfo; time zones (the parental rules'
	// windows) come from the binary.
	_ "time/tzdata"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() { daemon.Main(program) }

// program is playerd's start: flags and their PLAYERD_ variables, Validate,
// exit 125 on a configuration that can never work, run.
var program = daemon.Program[Config]{
	Name:    "playerd",
	Env:     "PLAYERD",
	Default: Config{Version: version, Procs: 1},
	Flags:   flags,
	Run: func(ctx context.Context, cfg Config, log *slog.Logger) error {
		if cfg.Procs > 0 {
			runtime.GOMAXPROCS(cfg.Procs)
		}
		return run(ctx, cfg, log)
	},
}
