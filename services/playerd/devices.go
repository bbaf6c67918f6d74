package main

import (
	"context"
	"log/slog"

	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/battery"
	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/chime"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/hat"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/power"
)

// The surfaces on the box itself: the touch screen, card readers and
// buttons, the battery board.

// openDisplay builds the touch screen from the -fb and -touch flags and
// attaches it to the core.
func openDisplay(cfg Config, h hooks, core *box.Box, conn api.Connectivity, log *slog.Logger) (*display.Display, error) {
	o := display.Options{
		Player:       core.Player(),
		Events:       core.Changes(),
		Messages:     core.Messages(),
		Home:         display.HomeFunc(func(context.Context) (home.Home, error) { return core.Home(), nil }),
		Covers:       core.Catalog(),
		Lang:         lang.Of(core.Settings().Get().Language).UI,
		OnError:      func(err error) { log.Warn("display", "error", err) },
		Screen:       h.screen,
		Restrictions: core.Rules().Restrictions,
		Pairing:      core.HomeAutomation(), // the code a client asks for is shown here only
	}
	if h.touch != nil {
		o.Touch = h.touch()
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

// openInput builds the inputs: card readers and media keys through evdev,
// buttons on GPIO lines (-input). They follow the core's wiring, hand card
// ids to the core's cards and take the player's one path, as the API's
// and the touch screen's commands do.
func openInput(cfg Config, h hooks, core *box.Box, log *slog.Logger) (*input.Manager, error) {
	play := func(ctx context.Context, snd chime.Sound) error { return chime.Play(ctx, core.Player(), snd) }
	o := input.Options{
		Wiring:     core.Wiring(),
		Cards:      core.Cards(),
		Player:     core.Player(),
		Chime:      play,
		ToggleCalm: core.ToggleCalm,
		PowerOff: func() {
			if _, err := core.Power().Request(power.PowerOff, "power button"); err != nil {
				log.Warn("power button", "error", err)
			}
		},
		OnDevice: func(d input.DeviceStatus, connected bool) {
			log.Info("input device", "connected", connected, "role", d.Role, "name", d.Name, "id", d.Vendor+":"+d.Product, "path", d.Path)
		},
		OnJack:  core.SetJack,
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
	return input.New(o)
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
