package main

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/httpserve"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/sysinfo"
)

// run is playerd: the core, the surfaces over it, and their supervision,
// until ctx ends, the core fails or someone asks to switch the box off.
func run(ctx context.Context, cfg Config, log *slog.Logger) error {
	h, err := machineHooks(log)
	if err != nil {
		return err
	}
	return runWith(ctx, cfg, log, h)
}

func runWith(ctx context.Context, cfg Config, log *slog.Logger, h hooks) error {
	start := time.Now()
	for _, ln := range []net.Listener{h.listener, h.haListener} {
		if ln != nil {
			defer ln.Close() // also when run fails before it serves
		}
	}
	clk := h.clock
	if clk == nil {
		clk = clock.NewSystem()
	}

	// The core.
	core, err := box.New(box.Config{
		Media: cfg.Media, Data: cfg.Data, Output: cfg.Output, Version: cfg.Version, Log: log, Clock: clk,
		PowerOff: h.powerOff, Reboot: h.reboot, Uploads: h.uploads,
		SpeechProgram: cfg.SpeechProgram, SpeechData: cfg.SpeechData, SpeechRemote: cfg.SpeechRemote,
		Fetch: fetch.Policy{AllowLoopback: h.allowLoopback}, StreamReadTimeout: h.streamReadTimeout,
		HoldScan: h.holdScan, Headphones: h.headphones,
	})
	if err != nil {
		return err
	}

	// The surfaces. The API listens first, so a client that is quick finds
	// the port open (its request waits until the API serves).
	ln := httpserve.Listen(h.listener, cfg.Listen, log)
	var ready sysinfo.Ready
	if ln != nil {
		ready = sysinfo.MarkReady("/proc", start)
	}
	s, err := newSurfaces(cfg, h, core, clk, ready, log)
	if err != nil {
		return err
	}
	if ln != nil {
		log.Info("playerd ready", "listen", ln.Addr().String(), "version", cfg.Version, "output", cfg.Output, "memory_limit", sysinfo.MemoryLimit(), "procs", runtime.GOMAXPROCS(0))
	}

	// Supervision: everything runs under one context; the core's failure or
	// a power request ends them all.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sup := daemon.NewGroup(log)
	sup.Essential(ctx, "core", core.Run)
	s.start(ctx, sup, ln)
	if h.onStart != nil {
		h.onStart(&running{core: core, display: s.display})
	}

	var runErr error
	var act power.Action
	select {
	case <-ctx.Done():
	case runErr = <-sup.Failed():
	case act = <-core.Power().Requested():
		core.PrepareShutdown()
	}
	cancel()
	core.Close() // event streams end, so their connections can close
	s.shutdown(5 * time.Second)
	sup.Wait() // the core's last state is on disk once it stopped
	log.Info("playerd stopped")
	if act != "" {
		if err := core.Power().Switch(context.Background(), act); err != nil && runErr == nil {
			runErr = err
		}
	}
	return runErr
}
