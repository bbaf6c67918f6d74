package box

import (
	"context"

	"github.com/storybox/storybox/services/playerd/internal/settings"
)

// SetCalm saves calm mode in the settings, as a parent's change: a calm
// card switches it (cards.Options.SetCalm).
func (b *Box) SetCalm(_ context.Context, on bool) error {
	return b.settings.Update(func(s *settings.Settings) { s.Calm = on })
}

// ToggleCalm switches calm mode over: the calm button (input).
func (b *Box) ToggleCalm(_ context.Context) error {
	return b.settings.Update(func(s *settings.Settings) { s.Calm = !s.Calm })
}
