// Package headphones finds the headphones: USB headphones or a USB sound
// card with a headphone jack (the kernel's uevents say when a sound card
// comes or goes, /proc/asound which one it is), or the sound board's own
// jack where a GPIO line says whether a plug is in. It only finds them: the
// core moves the player there (player.SetHeadphones), and the player alone
// opens and writes the output.
package headphones

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
)

// Found is where the headphones are, or Device "" for none.
type Found struct {
	// Device names what plays, for the log, and tells one device from
	// another: "hw:2,0 (Device)", or JackDevice for the board's jack.
	Device string
	// Output is the -output value that plays to it: "alsa:2,0".
	Output string
}

// JackDevice is Found.Device for the sound board's jack.
const JackDevice = "jack"

// Config is what a parent chose (the settings) and how the box is built.
type Config struct {
	// Enabled: the headphones take over the sound when plugged in.
	Enabled bool
	// Device is an ALSA device choice as -output alsa:DEV takes it; empty:
	// any USB sound card.
	Device string
	// Speaker is the speaker's -output: a card it plays on is never the
	// headphones (a box whose speaker is a USB DAC).
	Speaker string
	// JackWired: the sound board has a jack-detect line, and it is wired
	// (SetJack reports it). The jack plays on Device, or on the speaker's
	// output when Device is empty (boards that cut the speaker amplifier
	// when a plug is in).
	JackWired bool
}

// Decide says where the headphones are, given the playback devices there
// are and whether a plug is in the jack. With a jack, the jack decides
// (and any USB sound card beside it, when Device is empty); without one,
// Device being present does.
func Decide(c Config, devs []alsa.Device, jackIn bool) Found {
	if !c.Enabled {
		return Found{}
	}
	var speaker *alsa.Device
	if kind, spec, _ := strings.Cut(c.Speaker, ":"); kind == "alsa" {
		if d, err := alsa.Match(devs, spec); err == nil {
			speaker = &d
		}
	}
	var others []alsa.Device
	for _, d := range devs {
		if speaker == nil || d.Card != speaker.Card {
			others = append(others, d)
		}
	}
	if c.Device == "" || !c.JackWired {
		if d, ok := find(others, c.Device); ok {
			return Found{Device: d.String(), Output: fmt.Sprintf("alsa:%d,%d", d.Card, d.Dev)}
		}
	}
	if c.JackWired && jackIn {
		out := c.Speaker
		if c.Device != "" {
			out = "alsa:" + c.Device
		}
		return Found{Device: JackDevice, Output: out}
	}
	return Found{}
}

// usbDriver is the driver snd-usb-audio names in /proc/asound/cards: USB
// headphones, headsets and sound cards all have it.
const usbDriver = "USB-Audio"

func find(devs []alsa.Device, spec string) (alsa.Device, bool) {
	if spec != "" {
		d, err := alsa.Match(devs, spec)
		return d, err == nil
	}
	for _, d := range devs {
		if d.Driver == usbDriver {
			return d, true
		}
	}
	return alsa.Device{}, false
}

// Cards lists the playback devices there are now: alsa.PlaybackDevices of
// /proc/asound on the box.
type Cards func() ([]alsa.Device, error)

// Source tells when sound cards may have come or gone.
type Source interface {
	// Changes sends (without blocking: one pending change is enough) after
	// each such change, until ctx ends; then it closes the channel.
	Changes(ctx context.Context) (<-chan struct{}, error)
}

// settle is when the devices are looked at again after a uevent: the
// kernel announces a card before /proc/asound lists its playback device,
// and a USB device's cards come one after another. A handful of looks per
// plug, none while nothing happens.
var settle = []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second}

// Watcher follows the sound cards, the jack and the settings, and reports
// each change of where the headphones are.
type Watcher struct {
	cards    Cards
	src      Source
	onChange func(Found)
	onError  func(error)

	mu     sync.Mutex
	cfg    Config
	jackIn bool
	poke   chan struct{}
}

// New makes a Watcher with the configuration c. onChange hears each change
// of Found (never the same twice in a row; at start only when headphones
// are there), onError what could not be read; both are called from Run's
// goroutine.
func New(c Config, cards Cards, src Source, onChange func(Found), onError func(error)) *Watcher {
	if onError == nil {
		onError = func(error) {}
	}
	return &Watcher{cards: cards, src: src, onChange: onChange, onError: onError, cfg: c, poke: make(chan struct{}, 1)}
}

// Configure changes what a parent chose; the headphones are looked for
// again at once.
func (w *Watcher) Configure(c Config) {
	w.mu.Lock()
	w.cfg = c
	w.mu.Unlock()
	w.wake()
}

// SetJack reports the jack-detect line: a plug is in, or not.
func (w *Watcher) SetJack(in bool) {
	w.mu.Lock()
	w.jackIn = in
	w.mu.Unlock()
	w.wake()
}

func (w *Watcher) wake() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// Run follows the changes until ctx ends. Without a Source (none on this
// machine, or it failed) it still follows the settings and the jack.
func (w *Watcher) Run(ctx context.Context) {
	var changes <-chan struct{}
	if w.src != nil {
		c, err := w.src.Changes(ctx)
		if err != nil {
			w.onError(fmt.Errorf("headphones: not told of sound cards coming and going: %w", err))
		} else {
			changes = c
		}
	}
	last := Found{}
	check := func() {
		w.mu.Lock()
		c, jack := w.cfg, w.jackIn
		w.mu.Unlock()
		var devs []alsa.Device
		if c.Enabled {
			var err error
			if devs, err = w.cards(); err != nil {
				w.onError(fmt.Errorf("headphones: %w", err))
				return
			}
		}
		if f := Decide(c, devs, jack); f != last {
			last = f
			w.onChange(f)
		}
	}
	check()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	step := len(settle)
	for {
		select {
		case _, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			check()
			step = 0
			timer.Reset(settle[0])
		case <-timer.C:
			check()
			if step++; step < len(settle) {
				timer.Reset(settle[step] - settle[step-1])
			}
		case <-w.poke:
			check()
		case <-ctx.Done():
			timer.Stop()
			return
		}
	}
}
