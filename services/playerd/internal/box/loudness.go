package box

import (
	"context"
	"path/filepath"

	"github.com/storybox/storybox/services/playerd/internal/measure"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Loudness is the library's measured loudness: the player's lookups
// (loudness.Lookup) and the progress a parent sees.
func (b *Box) Loudness() *measure.Store { return b.loudness }

// openLoudness reads the kept results, beside the library cache.
func (b *Box) openLoudness() { b.loudness = measure.Open(filepath.Join(b.cfg.Data, "loudness.json")) }

// runLoudness measures the library in the background until ctx ends,
// yielding to the player (measure's pacing policy).
func (b *Box) runLoudness(ctx context.Context) {
	measure.New(measure.Config{
		Library: b.lib,
		Store:   b.loudness,
		Activity: func() (bool, uint64) {
			st := b.player.Status()
			return st.State == player.Playing, st.Jumps
		},
		OnError: func(err error) { b.log.Warn("loudness", "error", err) },
	}).Run(ctx)
}
