package box

import (
	"math"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/loudness"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// levels gives the player the background measurement's results.
type levels struct{ l loudness.Lookup }

func (v levels) Track(t library.Track) (player.Level, bool) {
	r, ok := v.l.Track(t.Path)
	return levelOf(r), ok
}

func (v levels) Folder(f library.Folder) (player.Level, bool) {
	r, ok := v.l.Folder(f.ID)
	return levelOf(r), ok
}

// levelOf: a result without a gated block has no loudness, only the gate's
// value in its place.
func levelOf(r loudness.Result) player.Level {
	l := player.Level{Integrated: r.Integrated, TruePeak: r.TruePeak}
	if r.Silent() {
		l.Integrated = math.NaN()
	}
	return l
}
