package box

import (
	"context"

	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/onscreen"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// ScreenSurface is the touch screen as it attaches to the core: what the
// core shows of its own accord (why the music stopped at the daily limit,
// a low battery), the messages other surfaces post, and what it shows for
// clients to mirror. Everything else the screen learns from Changes.
type ScreenSurface interface {
	ShowRefusal(*rules.Refusal)
	SetBatteryLow(low bool)
	ShowMessage(message.Request) (message.Message, error)
	ActiveMessage() *message.Message
	UIState() onscreen.UIState
	Screenshot(ctx context.Context) ([]byte, error)
}

type screenBox struct{ ScreenSurface }

// AttachScreen gives the core the touch screen. The screen is a surface
// built from the core, so it comes after New; attach it before Run, or the
// first notices are not shown.
func (b *Box) AttachScreen(s ScreenSurface) { b.screen.Store(&screenBox{s}) }

func (b *Box) onScreen(f func(ScreenSurface)) {
	if s := b.screen.Load(); s != nil {
		f(s.ScreenSurface)
	}
}

// ErrNoScreen answers what only a screen can do while none is attached:
// the one "display unavailable" of every surface (message.ErrNoDisplay).
var ErrNoScreen = message.ErrNoDisplay

// Screen is the screen as the other surfaces reach it, through the core: a
// message to show, what is shown, a picture of it. The APIs take this, not
// the screen.
type Screen struct{ b *Box }

// Screen is the screen's facet for the other surfaces.
func (b *Box) Screen() Screen { return Screen{b} }

func (s Screen) surface() ScreenSurface {
	if sb := s.b.screen.Load(); sb != nil {
		return sb.ScreenSurface
	}
	return nil
}

// Attached reports whether a screen is attached.
func (s Screen) Attached() bool { return s.surface() != nil }

// ShowMessage shows a message at once (message.Request's rules).
func (s Screen) ShowMessage(r message.Request) (message.Message, error) {
	if sc := s.surface(); sc != nil {
		return sc.ShowMessage(r)
	}
	if err := r.Check(); err != nil {
		return message.Message{}, err
	}
	return message.Message{}, ErrNoScreen
}

// ActiveMessage is the message on screen, or nil.
func (s Screen) ActiveMessage() *message.Message {
	if sc := s.surface(); sc != nil {
		return sc.ActiveMessage()
	}
	return nil
}

// UIState is what the screen shows, for clients that mirror the box.
func (s Screen) UIState() onscreen.UIState {
	if sc := s.surface(); sc != nil {
		return sc.UIState()
	}
	return onscreen.UIState{Screen: "home"}
}

// Screenshot is a PNG of what the screen shows, with what only someone in
// front of the box may see blanked.
func (s Screen) Screenshot(ctx context.Context) ([]byte, error) {
	if sc := s.surface(); sc != nil {
		return sc.Screenshot(ctx)
	}
	return nil, ErrNoScreen
}
