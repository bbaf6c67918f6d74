package main

import (
	"context"
	"net"
	"strconv"
	"sync"

	"github.com/storybox/storybox/services/playerd/internal/mpris"
)

// startMPRIS shows the box to the desktop session's media controls
// (-mpris session, `make run` on a desktop). Without a session bus it logs
// why and the box runs on: it is a convenience of a development machine.
func (a *app) startMPRIS(ctx context.Context, wg *sync.WaitGroup, ln net.Listener) {
	if a.cfg.MPRIS != "session" {
		return
	}
	cfg := mpris.Config{
		Player: a.commands(), // the same path as the APIs' commands
		Events: a.events,
		OnReady: func(name string) {
			a.log.Info("MPRIS", "name", name)
		},
	}
	if ln != nil {
		cfg.CoverBase = "http://" + reachable(ln.Addr())
	}
	wg.Go(func() {
		if err := mpris.Run(ctx, cfg); err != nil {
			a.log.Warn("MPRIS off", "error", err)
		}
	})
}

// reachable is addr as this machine's desktop reaches it: a listener on
// every address (":8090") is asked on loopback.
func reachable(addr net.Addr) string {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	ip := ta.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1) // a dual-stack listener takes IPv4 too
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(ta.Port))
}
