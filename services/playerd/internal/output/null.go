package output

import (
	"math"
	"time"
)

// Null is a sink that discards audio in real time, for development machines
// and boxes without a sound card.
type Null struct{ p *pacer }

// NewNull takes any rate, like a device that offers every rate.
func NewNull(rate int) *Null { return &Null{p: newPacer(rate)} }

func (n *Null) Rate() int                       { return n.p.rate }
func (n *Null) Write(frames [][2]float64) error { n.p.wrote(len(frames)); return nil }
func (n *Null) Drop() error                     { n.p.drop(); return nil }
func (n *Null) Drain() error                    { n.p.drain(); return nil }
func (n *Null) Delay() int                      { return n.p.buffered() }
func (n *Null) Close() error                    { return nil }

// Rewind takes back frames the modelled device has not played yet, as an
// ALSA device does.
func (n *Null) Rewind(frames int) (int, error) { return n.p.unwrite(frames), nil }

// MaxRewind is the modelled device's buffer.
func (n *Null) MaxRewind() int { return n.Capacity() }

// Capacity is the modelled device's buffer, which the player fills in
// batches as it does an ALSA device's (Filled).
func (n *Null) Capacity() int {
	return int(math.Round(float64(n.p.lead) * float64(n.p.rate) / float64(time.Second)))
}
