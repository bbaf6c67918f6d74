package player

import (
	"math"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/loudness"
)

// MeasuredLevels gives the player the background measurement's results
// (a loudness.Lookup) as its Levels.
func MeasuredLevels(l loudness.Lookup) Levels { return measuredLevels{l} }

type measuredLevels struct{ l loudness.Lookup }

func (v measuredLevels) Track(t library.Track) (Level, bool) {
	r, ok := v.l.Track(t.Path)
	return levelOf(r), ok
}

func (v measuredLevels) Folder(f library.Folder) (Level, bool) {
	r, ok := v.l.Folder(f.ID)
	return levelOf(r), ok
}

// levelOf: a result without a gated block has no loudness, only the gate's
// value in its place.
func levelOf(r loudness.Result) Level {
	l := Level{Integrated: r.Integrated, TruePeak: r.TruePeak}
	if r.Silent() {
		l.Integrated = math.NaN()
	}
	return l
}
