package display

import (
	"errors"
	"fmt"
	"image"
	"os"
	"strings"
)

// Devices are the screen and its touch panel as playerd's flags name them.
type Devices struct {
	// FB is the framebuffer: a device path, "auto" (/dev/fb0 if present)
	// or "none" (headless); "" is none.
	FB string
	// Console is put in graphics mode while drawing; "" leaves it alone.
	Console string
	// Touch is "auto", "none" or an event device; TouchAxes its
	// orientation: comma-separated swap, invert-x, invert-y.
	Touch, TouchAxes string
}

// Validate checks the names without opening anything. A relative device
// path is refused: it would depend on the directory gokrazy starts us in.
func (d Devices) Validate() error {
	if err := devicePath("-fb", d.FB, "auto", "none"); err != nil {
		return err
	}
	if err := devicePath("-console", d.Console); err != nil {
		return err
	}
	if err := devicePath("-touch", d.Touch, "auto", "none"); err != nil {
		return err
	}
	_, err := ParseTouchAxes(d.TouchAxes)
	return err
}

func devicePath(flagName, v string, words ...string) error {
	if v == "" || strings.HasPrefix(v, "/") {
		return nil
	}
	for _, w := range words {
		if v == w {
			return nil
		}
	}
	want := "an absolute device path"
	if len(words) > 0 {
		want = strings.Join(words, ", ") + " or " + want
	}
	return fmt.Errorf("%s %q: want %s", flagName, v, want)
}

// ParseTouchAxes reads a comma-separated list of swap, invert-x and
// invert-y, applied in that order.
func ParseTouchAxes(s string) (TouchOptions, error) {
	var o TouchOptions
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

// Open opens the devices into o (unless o already has a Screen, as a test
// gives) and makes the display. The box is first of all an audio player:
// a screen or touch panel that cannot be opened is returned among the
// problems to log, and the display runs headless (the screenshot still
// shows what it would draw) or untouched.
func Open(devs Devices, o Options) (d *Display, problems error, err error) {
	probs, err := devs.open(&o)
	if err != nil {
		return nil, nil, err
	}
	d, err = New(o)
	if err != nil {
		if o.Screen != nil {
			o.Screen.Close()
		}
		if o.Touch != nil {
			o.Touch.Close()
		}
		return nil, nil, err
	}
	return d, errors.Join(probs...), nil
}

// open opens the framebuffer, its backlight and the touch panel into o,
// keeping a screen o already has. What cannot be opened is among probs; err
// is a bad -touch-axes.
func (devs Devices) open(o *Options) (probs []error, err error) {
	fb := devs.FB
	if fb == "auto" {
		fb = ""
		if _, err := os.Stat("/dev/fb0"); err == nil {
			fb = "/dev/fb0"
		}
	}
	if fb != "" && fb != "none" && o.Screen == nil {
		f, err := OpenFramebuffer(fb, devs.Console)
		if err != nil {
			probs = append(probs, fmt.Errorf("framebuffer unusable, running headless: %w", err))
		} else {
			o.Screen = f
			if bl, err := OpenBacklight("/sys/class/backlight"); err == nil {
				o.Backlight = bl
			}
		}
	}
	size := image.Pt(DefaultWidth, DefaultHeight)
	if o.Screen != nil {
		size = o.Screen.Size()
	}
	touch := devs.Touch
	if touch == "auto" && o.Screen == nil {
		touch = "none" // nothing to touch
	}
	if touch != "none" && touch != "" {
		to, err := ParseTouchAxes(devs.TouchAxes)
		if err != nil {
			if o.Screen != nil {
				o.Screen.Close()
			}
			return nil, err
		}
		t, err := OpenTouch(touch, size, to)
		if err != nil {
			probs = append(probs, fmt.Errorf("no touch input: %w", err))
		} else {
			o.Touch = t
		}
	}
	return probs, nil
}

// ScreenSize is the size of the screen the display draws on.
func (d *Display) ScreenSize() (image.Point, bool) {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if d.o.Screen == nil {
		return image.Point{}, false
	}
	return d.o.Screen.Size(), true
}
