package box

import (
	"context"
	"path/filepath"

	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/chime"
)

// newCards is what a card read does, over the parent's mappings. Its
// commands take the player's one path, so the parental rules cover a card
// as they cover a tap. err is only the list of unknown cards unreadable
// (it starts empty).
func (b *Box) newCards() (*cards.Service, error) {
	return cards.New(cards.Options{
		Store:       b.cardStore,
		Player:      b.player,
		Catalog:     b.catalog,
		Resume:      b.ResumeIndex,
		SetCalm:     b.SetCalm,
		Chime:       func(ctx context.Context, snd chime.Sound) error { return chime.Play(ctx, b.player, snd) },
		UnknownFile: filepath.Join(b.cfg.Data, cards.UnknownFileName),
		OnRead: func(r cards.Read) {
			b.log.Info("card", "id", r.ID, "outcome", r.Outcome, "error", r.Error)
		},
		OnError: func(err error) { b.log.Warn("cards", "error", err) },
		Clock:   b.clock,
	})
}
