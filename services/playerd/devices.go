package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/battery"
	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/chime"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/haserve"
	"github.com/storybox/storybox/services/playerd/internal/hat"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/power"
)

// The surfaces on the box itself: the touch screen, card readers and
// buttons, the battery board.

// openDisplay builds the touch screen from the -fb and -touch flags and
// attaches it to the core.
func openDisplay(cfg Config, h hooks, core *box.Box, ha *haserve.Service, conn api.Connectivity, log *slog.Logger) (*display.Display, error) {
	o := display.Options{
		Player:       core.Player(),
		Events:       core.Changes(),
		Home:         display.HomeFunc(func(context.Context) (home.Home, error) { return core.Home(), nil }),
		Covers:       core.Catalog(),
		Lang:         core.Settings().Get().Language,
		OnError:      func(err error) { log.Warn("display", "error", err) },
		Screen:       h.screen,
		Restrictions: core.Rules().Restrictions,
	}
	if srv := ha.Admin(); srv != nil {
		o.Pairing, o.Fingerprint = srv.Pairing(), srv.Identity().Fingerprint()
	}
	if conn != nil { // the Wi-Fi setup screen joins through netd, as the API does
		o.Network = conn
	}
	d, problems, err := display.Open(cfg.Display, o)
	if err != nil {
		return nil, err
	}
	if problems != nil {
		log.Warn("display", "error", problems)
	}
	if size, ok := d.ScreenSize(); ok && h.screen == nil {
		log.Info("framebuffer", "size", size)
	}
	core.AttachScreen(d)
	return d, nil
}

// openInput builds the cards and the inputs: card readers and media keys
// through evdev, buttons on GPIO lines (-input). Their commands take the
// player's one path, as the API's and the touch screen's do.
func openInput(cfg Config, h hooks, core *box.Box, clk clock.Clock, log *slog.Logger) (*cards.Service, *input.Manager, error) {
	play := func(ctx context.Context, snd chime.Sound) error { return chime.Play(ctx, core.Player(), snd) }
	c, err := cards.New(cards.Options{
		Store:       core.Cards(),
		Player:      core.Player(),
		Catalog:     core.Catalog(),
		Resume:      core.ResumeIndex,
		Chime:       play,
		UnknownFile: filepath.Join(cfg.Data, cards.UnknownFileName),
		OnRead: func(r cards.Read) {
			log.Info("card", "id", r.ID, "outcome", r.Outcome, "error", r.Error)
		},
		OnError: func(err error) { log.Warn("cards", "error", err) },
		Clock:   clk,
	})
	if c == nil {
		return nil, nil, err
	}
	if err != nil {
		log.Warn("unknown cards", "error", err) // the list starts empty
	}
	o := input.Options{
		Wiring: core.Wiring(),
		Cards:  c,
		Player: core.Player(),
		Chime:  play,
		PowerOff: func() {
			if _, err := core.Power().Request(power.PowerOff, "power button"); err != nil {
				log.Warn("power button", "error", err)
			}
		},
		OnDevice: func(d input.DeviceStatus, connected bool) {
			log.Info("input device", "connected", connected, "role", d.Role, "name", d.Name, "id", d.Vendor+":"+d.Product, "path", d.Path)
		},
		OnError: func(err error) { log.Warn("input", "error", err) },
		Rescan:  h.inputRescan,
	}
	if cfg.Input == "auto" {
		o.Devices, o.GPIO = input.Evdev{}, input.ChipLines{}
	}
	if h.inputDevices != nil {
		o.Devices = h.inputDevices
	}
	if h.gpio != nil {
		o.GPIO = h.gpio
	}
	m, err := input.New(o)
	return c, m, err
}

// watchBattery polls hatd and hands each new battery level to the core.
func watchBattery(hatd *hat.Client, core *box.Box, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		hat.NewMonitor(hatd, hat.MonitorOptions{
			OnReachable: func(ok bool, err error) {
				if ok {
					log.Info("battery board service reachable")
				} else {
					log.Warn("battery board service unreachable", "error", err)
				}
			},
			OnLevel: func(c battery.Change) { core.BatteryLevel(ctx, c) },
		}).Run(ctx)
		return nil
	}
}
