package display

import (
	"errors"
	"fmt"
)

// Attach gives the display a screen and a touch panel in place of those
// Run closed when it returned, for the next Run: the screen restarted on a
// parent's word (POST /api/admin/ui/restart) or after Run failed. The next
// frame is drawn whole onto the new screen. nil for either runs without
// it. A screen of another size than the display's frame is refused, and
// both are closed. Call it only while Run is not running.
func (d *Display) Attach(s Screen, t TouchSource) error {
	return d.attach(s, nil, t)
}

// Reopen opens the devices anew, as Open does, and attaches them. problems
// are what could not be opened (the display then runs headless or
// untouched, as after Open); err a screen that does not fit.
func (d *Display) Reopen(devs Devices) (problems error, err error) {
	var o Options
	probs, err := devs.open(&o)
	if err != nil {
		return nil, err
	}
	return errors.Join(probs...), d.attach(o.Screen, o.Backlight, o.Touch)
}

func (d *Display) attach(s Screen, bl Backlight, t TouchSource) error {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if s != nil && s.Size() != d.o.Size {
		err := fmt.Errorf("display: the new screen is %v, the display draws %v", s.Size(), d.o.Size)
		s.Close()
		if t != nil {
			t.Close()
		}
		return err
	}
	if d.o.Screen != nil && d.o.Screen != s {
		d.o.Screen.Close() // Run was not running: nothing else holds it
	}
	d.o.Screen, d.o.Touch = s, t
	if bl != nil {
		d.o.Backlight = bl
	}
	d.shown, d.lit = nil, -1 // the new screen has shown nothing yet
	return nil
}
