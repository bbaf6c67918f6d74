package main

import (
	"context"
	"fmt"
	"image"
	"os"
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/home"
)

// newDisplay builds the touch screen from the -fb and -touch flags. The box
// is first of all an audio player, so a screen or touch panel that cannot
// be opened is logged and the display runs headless (the screenshot
// endpoint still shows what it would draw).
func (a *app) newDisplay() (*display.Display, error) {
	o := display.Options{
		Player: a.player,
		Events: a.events,
		Home:   display.HomeFunc(func(context.Context) (home.Home, error) { return a.home(), nil }),
		Covers: a.catalog,
		Lang:   a.settings.Get().Language,
		OnError: func(err error) {
			a.log.Warn("display", "error", err)
		},
		Screen:       a.cfg.Screen,
		Restrictions: a.rules.Restrictions,
	}
	if a.ha != nil {
		o.Pairing, o.Fingerprint = a.ha.pairing, a.ha.id.Fingerprint()
	}
	if a.net != nil { // the Wi-Fi setup screen joins through netd, as the API does
		o.Network = a.net
	}
	fbPath := a.cfg.FB
	if fbPath == "auto" {
		fbPath = ""
		if _, err := os.Stat("/dev/fb0"); err == nil {
			fbPath = "/dev/fb0"
		}
	}
	if fbPath != "" && fbPath != "none" && o.Screen == nil {
		fb, err := display.OpenFramebuffer(fbPath, a.cfg.Console)
		if err != nil {
			a.log.Error("framebuffer unusable, running headless", "error", err)
		} else {
			o.Screen = fb
			a.log.Info("framebuffer", "device", fbPath, "size", fb.Size())
			if bl, err := display.OpenBacklight("/sys/class/backlight"); err == nil {
				o.Backlight = bl
			}
		}
	}
	size := image.Pt(display.DefaultWidth, display.DefaultHeight)
	if o.Screen != nil {
		size = o.Screen.Size()
	}
	touch := a.cfg.Touch
	if touch == "auto" && o.Screen == nil {
		touch = "none" // nothing to touch
	}
	if touch != "none" && touch != "" {
		to, err := touchOptions(a.cfg.TouchAxes)
		if err != nil {
			return nil, err
		}
		t, err := display.OpenTouch(touch, size, to)
		if err != nil {
			a.log.Warn("no touch input", "error", err)
		} else {
			o.Touch = t
		}
	}
	d, err := display.New(o)
	if err != nil {
		if o.Screen != nil {
			o.Screen.Close()
		}
		if o.Touch != nil {
			o.Touch.Close()
		}
		return nil, err
	}
	return d, nil
}

// touchOptions parses -touch-axes: a comma-separated list of swap,
// invert-x and invert-y, applied in that order.
func touchOptions(s string) (display.TouchOptions, error) {
	var o display.TouchOptions
	for _, f := range strings.Split(s, ",") {
		switch strings.TrimSpace(f) {
		case "":
		case "swap":
			o.SwapXY = true
		case "invert-x":
			o.InvertX = true
		case "invert-y":
			o.InvertY = true
		default:
			return o, fmt.Errorf("-touch-axes: unknown %q (want swap, invert-x, invert-y)", f)
		}
	}
	return o, nil
}
