package box

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
	"github.com/storybox/storybox/services/playerd/internal/output/headphones"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/settings"
)

// HeadphoneHooks are what tests put in place of the machine's sound cards.
// The zero value is the machine: with an ALSA speaker (-output alsa…), the
// playback devices in /proc/asound and the kernel's uevents; with another
// speaker (null, wav), no headphones but the jack's.
type HeadphoneHooks struct {
	Cards  headphones.Cards
	Source headphones.Source
	// Open plays to what was found; nil: output.Parse(f.Output).
	Open func(headphones.Found) (output.Opener, error)
}

// phones moves the player to the headphones and back as the watcher finds
// them, at the cap the settings give them.
type phones struct {
	b       *Box
	watcher *headphones.Watcher
	open    func(headphones.Found) (output.Opener, error)

	mu    sync.Mutex // one move of the player at a time, in order
	found headphones.Found
	jack  bool // a jack-detect line is wired
}

func (b *Box) newPhones() {
	h := b.cfg.Headphones
	p := &phones{b: b, open: h.Open}
	if p.open == nil {
		p.open = func(f headphones.Found) (output.Opener, error) { return output.Parse(f.Output) }
	}
	cards, src := h.Cards, h.Source
	if cards == nil && src == nil && strings.HasPrefix(b.cfg.Output, "alsa") {
		cards = func() ([]alsa.Device, error) { return alsa.PlaybackDevices("/proc/asound") }
		src = headphones.Uevents{}
	}
	if cards == nil {
		cards = func() ([]alsa.Device, error) { return nil, nil }
	}
	p.watcher = headphones.New(p.config(b.settings.Get()), cards, src, p.moved, func(err error) {
		b.log.Warn("headphones", "error", err)
	})
	b.phones = p
	b.settings.OnChange(func(old, s settings.Settings) {
		if old.Audio != s.Audio {
			p.watcher.Configure(p.config(s))
			p.apply() // a new cap for the headphones playing
		}
	})
}

func (p *phones) config(s settings.Settings) headphones.Config {
	p.mu.Lock()
	jack := p.jack
	p.mu.Unlock()
	return headphones.Config{Enabled: s.Audio.Headphones, Device: s.Audio.HeadphoneDevice, Speaker: p.b.cfg.Output, JackWired: jack}
}

// moved hears the watcher.
func (p *phones) moved(f headphones.Found) {
	p.mu.Lock()
	p.found = f
	p.mu.Unlock()
	if f.Device == "" {
		p.b.log.Info("headphones gone (unplugged or switched off); paused")
	} else {
		p.b.log.Info("headphones plugged in", "device", f.Device)
	}
	p.apply()
}

// apply tells the player where to play.
func (p *phones) apply() {
	p.mu.Lock()
	defer p.mu.Unlock()
	var h *player.Headphones
	if p.found.Device != "" {
		open, err := p.open(p.found)
		if err != nil {
			p.b.log.Error("headphones", "device", p.found.Device, "error", err)
			return
		}
		h = &player.Headphones{Device: p.found.Device, Open: open, MaxVolume: p.b.settings.Get().Audio.HeadphoneMaxVolume}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := p.b.player.SetHeadphones(ctx, h); err != nil && !errors.Is(err, player.ErrClosed) {
		p.b.log.Error("headphones", "error", err)
	}
}

// SetJack is the sound board's jack-detect line (the readers and buttons
// surface reads it): wired or not, and whether a plug is in.
func (b *Box) SetJack(wired, in bool) {
	p := b.phones
	p.mu.Lock()
	changed := p.jack != wired
	p.jack = wired
	p.mu.Unlock()
	if changed {
		p.watcher.Configure(p.config(b.settings.Get()))
	}
	p.watcher.SetJack(in)
}
