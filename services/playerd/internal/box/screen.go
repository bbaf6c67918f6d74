package box

import "github.com/storybox/storybox/services/playerd/internal/rules"

// Screen is what the core shows of its own accord: why the music stopped
// (the daily limit) and that the battery is low. Everything else the
// screen learns from Changes.
type Screen interface {
	ShowRefusal(*rules.Refusal)
	SetBatteryLow(low bool)
}

type screenBox struct{ Screen }

// AttachScreen gives the core the touch screen. The screen is a surface
// built from the core, so it comes after New; attach it before Run, or the
// first notices are not shown.
func (b *Box) AttachScreen(s Screen) { b.screen.Store(&screenBox{s}) }

func (b *Box) onScreen(f func(Screen)) {
	if s := b.screen.Load(); s != nil {
		f(s.Screen)
	}
}
