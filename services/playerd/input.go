package main

import (
	"context"
	"path/filepath"

	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/chime"
	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/power"
)

// newInput builds the card mappings and the inputs: card readers and media
// keys through evdev, buttons on GPIO lines (-input). Their commands go
// through the player's Do, the path the API and the touch screen take. A
// mappings or wiring file that cannot be read is logged and the defaults
// are used; the file stays for the parent.
func (a *app) newInput() error {
	var err error
	if a.cardStore, err = cards.Load(a.cfg.Data); err != nil {
		a.log.Warn("card mappings", "error", err)
	}
	if a.wiring, err = input.LoadWiring(a.cfg.Data); err != nil {
		a.log.Warn("input wiring", "error", err)
	}
	play := func(ctx context.Context, s chime.Sound) error { return chime.Play(ctx, a.player, s) }
	a.cards, err = cards.New(cards.Options{
		Store:   a.cardStore,
		Player:  a.player,
		Catalog: a.lib,
		Resume: func(id string) (int, bool) {
			rp, ok := a.saved.Load().Resume[id]
			return rp.Index, ok
		},
		Chime:       play,
		UnknownFile: filepath.Join(a.cfg.Data, cards.UnknownFileName),
		OnRead:      a.cardRead,
		OnError:     func(err error) { a.log.Warn("cards", "error", err) },
		Now:         a.cfg.CardClock,
	})
	if err != nil {
		a.log.Warn("unknown cards", "error", err) // the list starts empty
	}
	if a.cards == nil {
		return err
	}
	o := input.Options{
		Wiring:   a.wiring,
		Cards:    a.cards,
		Player:   a.player,
		Chime:    play,
		PowerOff: a.pressPowerButton,
		OnDevice: func(d input.DeviceStatus, connected bool) {
			if connected {
				a.log.Info("input device connected", "role", d.Role, "name", d.Name, "id", d.Vendor+":"+d.Product, "path", d.Path)
			} else {
				a.log.Info("input device gone", "role", d.Role, "name", d.Name, "path", d.Path)
			}
		},
		OnError: func(err error) { a.log.Warn("input", "error", err) },
		Rescan:  a.cfg.InputRescan,
	}
	if a.cfg.Input == "auto" {
		o.Devices, o.GPIO = input.Evdev{}, input.ChipLines{}
	}
	if a.cfg.InputDevices != nil {
		o.Devices = a.cfg.InputDevices
	}
	if a.cfg.GPIO != nil {
		o.GPIO = a.cfg.GPIO
	}
	a.input, err = input.New(o)
	return err
}

// cardRead hears every card read (but repeats): the place where reads go
// out as events.
func (a *app) cardRead(r cards.Read) {
	if r.Error != "" {
		a.log.Info("card", "id", r.ID, "outcome", r.Outcome, "error", r.Error)
		return
	}
	a.log.Info("card", "id", r.ID, "outcome", r.Outcome)
}

// pressPowerButton asks run to power off, once, the way the admin API does:
// run pauses, stops every part and saves before it switches.
func (a *app) pressPowerButton() {
	select {
	case a.adm.powerReq <- power.PowerOff:
		a.log.Warn("power button: powering off")
	default:
	}
}
