package display

import (
	"errors"
	"fmt"
	"image"
	"os"
	"slices"

	evdev "github.com/holoplot/go-evdev"
)

// eventReader is the part of *evdev.InputDevice the touch reader uses.
type eventReader interface {
	ReadOne() (*evdev.InputEvent, error)
	Close() error
}

// axis maps a raw touch coordinate onto pixels.
type axis struct{ min, max int32 }

func (a axis) scale(v int32, pixels int) int {
	p := int(v) // no range reported: take the values as pixels
	if a.max > a.min {
		p = int(int64(v-a.min) * int64(pixels) / int64(a.max-a.min+1))
	}
	return min(max(p, 0), pixels-1)
}

// Touch reads single-touch taps from an evdev device. ft5x06-class panels
// and USB HID touch screens both report ABS_X/ABS_Y (or slot 0 of the
// multi-touch protocol) with BTN_TOUCH, which is all a tap needs.
type Touch struct {
	r      eventReader
	x, y   axis
	screen image.Point
	dec    tapDecoder
}

// TouchOptions adjust a touch panel mounted differently from the display.
type TouchOptions struct {
	SwapXY, InvertX, InvertY bool
}

// OpenTouch opens an evdev touch device; path "auto" picks the first device
// that reports absolute positions and BTN_TOUCH. screen is the frame size
// the raw coordinates are scaled to.
func OpenTouch(path string, screen image.Point, o TouchOptions) (*Touch, error) {
	if path == "auto" {
		p, err := findTouch()
		if err != nil {
			return nil, err
		}
		path = p
	}
	dev, err := evdev.OpenWithFlags(path, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("display: touch %s: %w", path, err)
	}
	// Non-blocking under Go's poller, so Close interrupts a pending read.
	if err := dev.NonBlock(); err != nil {
		dev.Close()
		return nil, fmt.Errorf("display: touch %s: %w", path, err)
	}
	infos, err := dev.AbsInfos()
	if err != nil {
		dev.Close()
		return nil, fmt.Errorf("display: touch %s: %w", path, err)
	}
	rng := func(codes ...evdev.EvCode) axis {
		for _, c := range codes {
			if i, ok := infos[c]; ok && i.Maximum > i.Minimum {
				return axis{i.Minimum, i.Maximum}
			}
		}
		return axis{}
	}
	t := newTouch(dev, rng(evdev.ABS_X, evdev.ABS_MT_POSITION_X), rng(evdev.ABS_Y, evdev.ABS_MT_POSITION_Y), screen)
	t.dec.opts = o
	return t, nil
}

func newTouch(r eventReader, x, y axis, screen image.Point) *Touch {
	return &Touch{r: r, x: x, y: y, screen: screen}
}

func findTouch() (string, error) {
	paths, err := evdev.ListDevicePaths()
	if err != nil {
		return "", fmt.Errorf("display: list input devices: %w", err)
	}
	for _, p := range paths {
		dev, err := evdev.OpenWithFlags(p.Path, os.O_RDONLY)
		if err != nil {
			continue
		}
		abs := dev.CapableEvents(evdev.EV_ABS)
		keys := dev.CapableEvents(evdev.EV_KEY)
		dev.Close()
		if (slices.Contains(abs, evdev.ABS_X) || slices.Contains(abs, evdev.ABS_MT_POSITION_X)) &&
			slices.Contains(keys, evdev.BTN_TOUCH) {
			return p.Path, nil
		}
	}
	return "", errors.New("display: no touch screen among /dev/input devices")
}

// NextTap implements TouchSource.
func (t *Touch) NextTap() (image.Point, error) {
	for {
		ev, err := t.r.ReadOne()
		if err != nil {
			return image.Point{}, fmt.Errorf("display: read touch: %w", err)
		}
		if raw, ok := t.dec.feed(*ev); ok {
			return t.toScreen(raw), nil
		}
	}
}

func (t *Touch) toScreen(raw [2]int32) image.Point {
	x, y := t.x, t.y
	w, h := t.screen.X, t.screen.Y
	if t.dec.opts.SwapXY {
		raw[0], raw[1] = raw[1], raw[0]
		x, y = y, x
	}
	p := image.Pt(x.scale(raw[0], w), y.scale(raw[1], h))
	if t.dec.opts.InvertX {
		p.X = w - 1 - p.X
	}
	if t.dec.opts.InvertY {
		p.Y = h - 1 - p.Y
	}
	return p
}

// Close implements TouchSource.
func (t *Touch) Close() error { return t.r.Close() }

// tapDecoder turns the evdev event stream into taps. A tap is reported when
// the finger lifts, at the place it went down: children press firmly and
// slide a little, and the place of the press is what they aimed at.
type tapDecoder struct {
	opts     TouchOptions
	slot     int32 // current multi-touch slot; only slot 0 counts
	x, y     int32
	down     bool // finger on the glass, as of the last SYN_REPORT
	wantDown int  // pending BTN_TOUCH / tracking id change: 1 down, -1 up
	start    [2]int32
	dropped  bool
}

func (d *tapDecoder) feed(ev evdev.InputEvent) ([2]int32, bool) {
	switch ev.Type {
	case evdev.EV_ABS:
		if d.dropped {
			return [2]int32{}, false
		}
		switch ev.Code {
		case evdev.ABS_MT_SLOT:
			d.slot = ev.Value
		case evdev.ABS_X:
			d.x = ev.Value
		case evdev.ABS_Y:
			d.y = ev.Value
		case evdev.ABS_MT_POSITION_X:
			if d.slot == 0 {
				d.x = ev.Value
			}
		case evdev.ABS_MT_POSITION_Y:
			if d.slot == 0 {
				d.y = ev.Value
			}
		case evdev.ABS_MT_TRACKING_ID:
			if d.slot == 0 {
				d.wantDown = 1
				if ev.Value < 0 {
					d.wantDown = -1
				}
			}
		}
	case evdev.EV_KEY:
		if d.dropped || (ev.Code != evdev.BTN_TOUCH && ev.Code != evdev.BTN_LEFT) {
			return [2]int32{}, false
		}
		d.wantDown = -1
		if ev.Value != 0 {
			d.wantDown = 1
		}
	case evdev.EV_SYN:
		switch ev.Code {
		case evdev.SYN_DROPPED:
			// Events were lost: forget the touch in progress rather than
			// tap somewhere the child did not.
			d.dropped, d.down, d.wantDown = true, false, 0
		case evdev.SYN_REPORT:
			if d.dropped {
				d.dropped = false
				return [2]int32{}, false
			}
			change := d.wantDown
			d.wantDown = 0
			switch {
			case change > 0 && !d.down:
				d.down, d.start = true, [2]int32{d.x, d.y}
			case change < 0 && d.down:
				d.down = false
				return d.start, true
			}
		}
	}
	return [2]int32{}, false
}
