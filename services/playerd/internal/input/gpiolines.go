package input

import (
	"fmt"

	"github.com/storybox/storybox/services/playerd/internal/input/gpio"
)

// Lines are requested GPIO lines: their edges and current levels.
type Lines interface {
	Read() (gpio.Event, error)
	Values() ([]bool, error)
	Close() error
}

// GPIOOpener requests the button lines of a wiring.
type GPIOOpener interface {
	// Open returns the lines and a description of the chip for the status.
	Open(g GPIO, offsets []int) (Lines, string, error)
}

// ChipLines opens lines on the kernel's GPIO chips.
type ChipLines struct {
	Dir string // "" means /dev
}

// Open implements GPIOOpener.
func (c ChipLines) Open(g GPIO, offsets []int) (Lines, string, error) {
	dir := c.Dir
	if dir == "" {
		dir = "/dev"
	}
	chips, err := gpio.Chips(dir)
	if err != nil {
		return nil, "", err
	}
	chip, err := gpio.Find(chips, g.Chip)
	if err != nil {
		return nil, "", err
	}
	for _, o := range offsets {
		if o >= chip.Lines {
			return nil, "", fmt.Errorf("gpio: %s (%s) has lines 0..%d, not %d", chip.Name, chip.Label, chip.Lines-1, o)
		}
	}
	l, err := gpio.Watch(chip.Path, gpio.Config{Offsets: offsets, ActiveLow: g.ActiveLow, Bias: g.Bias,
		Debounce: msDuration(g.DebounceMS), Consumer: "storybox"})
	if err != nil {
		return nil, "", err
	}
	return l, chip.Name + " (" + chip.Label + ")", nil
}
