package box

import (
	"context"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/battery"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/power"
)

// BatteryLevel is the core's answer to a new battery level from the
// battery board's service: everyone hears of it (the feed), the screen
// shows a low battery, the child hears it once per drop (a tone and a
// sentence), and a critical battery switches the box off the one way it
// is ever switched off, before the board cuts the power.
func (b *Box) BatteryLevel(ctx context.Context, c battery.Change) {
	b.log.Warn("battery level", "from", c.From, "to", c.To, "percent", deref(c.Percent))
	b.notify.battery(c)
	b.onScreen(func(s ScreenSurface) { s.SetBatteryLow(c.To == battery.Low || c.To == battery.Critical) })
	switch c.To {
	case battery.Low:
		text := "The battery is almost empty. Please charge the box."
		if b.german() {
			text = "Der Akku ist fast leer. Bitte lade die Box auf."
		}
		go func() {
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := b.player.Announce(actx, battery.WarningTone(int(output.ClipRate))); err != nil {
				b.log.Warn("low-battery warning", "error", err)
			}
		}()
		go func() {
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if _, err := b.speech.Speak(sctx, text, ""); err != nil {
				b.log.Warn("low-battery announcement", "error", err)
			}
		}()
	case battery.Critical:
		if _, err := b.power.Request(power.PowerOff, "battery critical"); err != nil {
			b.log.Warn("battery critical", "error", err)
		}
	}
}
