// Package chime makes the box's short signal sounds: a card was read and is
// known, a card is unknown, a card was learned, an action was refused. They
// are synthesized (no sound files to ship) and played as announcements, so
// the music pauses for them and continues exactly where it was.
package chime

import (
	"context"
	"math"

	"github.com/storybox/storybox/services/playerd/internal/output"
)

// Sound is one of the signals.
type Sound int

const (
	// Known: a card was read and its action follows. Two bright rising notes.
	Known Sound = iota
	// Unknown: a card was read that nobody has assigned yet. Two low notes.
	Unknown
	// Learned: teach mode took the card. Three rising notes.
	Learned
	// Refused: the box will not do what was asked (a rule, nothing to
	// play). Two soft falling notes: a gentle "no", not an alarm.
	Refused
)

func (s Sound) String() string {
	switch s {
	case Known:
		return "known"
	case Unknown:
		return "unknown"
	case Learned:
		return "learned"
	case Refused:
		return "refused"
	}
	return "sound"
}

type note struct {
	hz   float64
	ms   int
	gain float64
}

// Notes are pitched for small speakers (above 400 Hz) and kept short: the
// whole signal is under half a second.
var scores = map[Sound][]note{
	Known:   {{659.3, 90, 0.30}, {880.0, 120, 0.30}},
	Unknown: {{392.0, 120, 0.30}, {0, 50, 0}, {392.0, 120, 0.30}},
	Learned: {{523.3, 80, 0.30}, {659.3, 80, 0.30}, {784.0, 140, 0.30}},
	Refused: {{440.0, 150, 0.18}, {329.6, 220, 0.18}},
}

// PCM renders s as stereo frames at output.ClipRate.
func PCM(s Sound) [][2]float64 {
	var out [][2]float64
	for _, n := range scores[s] {
		frames := output.ClipRate * n.ms / 1000
		attack := output.ClipRate * 5 / 1000 // against clicks
		for i := range frames {
			env := math.Exp(-3 * float64(i) / float64(frames)) // a struck, fading note
			if i < attack {
				env *= float64(i) / float64(attack)
			}
			if rest := frames - i; rest < attack {
				env *= float64(rest) / float64(attack)
			}
			v := n.gain * env * math.Sin(2*math.Pi*n.hz*float64(i)/output.ClipRate)
			out = append(out, [2]float64{v, v})
		}
	}
	return out
}

// Announcer plays PCM over the music: the player's Announce.
type Announcer interface {
	Announce(ctx context.Context, pcm [][2]float64) (<-chan struct{}, error)
}

// Play plays s through a and returns once it has started.
func Play(ctx context.Context, a Announcer, s Sound) error {
	_, err := a.Announce(ctx, PCM(s))
	return err
}
