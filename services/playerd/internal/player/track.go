package player

import (
	"fmt"
	"math"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/resample"
)

// resampleQuality 4 costs about 1 % of a core at 44.1 → 48 kHz and is clean
// for speech and music (platform.md §B1.4). Only a track whose rate differs
// from the output's is resampled: one inside an album of another rate, or
// any where the device lacks the track's rate.
const resampleQuality = 4

// track is the open, playing queue entry.
type track struct {
	item     QueueItem
	dec      beep.StreamSeekCloser
	format   beep.Format   // of dec; a remote's is the rate it was opened at
	rate     int           // the output rate the track streams at
	s        beep.Streamer // dec, resampled to rate when that is not its own
	base     int           // frames at rate before the current decoder position
	frames   int           // frames at rate streamed since base
	duration float64
	remote   Remote // a station or an episode; dec stands for it

	norm     Normalization // how loud it plays (normalize.go)
	normGain float64       // norm.GainDB, linear
	lev      *leveller     // a station's or an episode's; nil for files
}

// openTrack opens a file, or a stream without waiting for the network, to
// stream at rate. It runs in the prefetch goroutine too, so it touches no
// player state.
func (p *Player) openTrack(t library.Track, item QueueItem, rate int) (*track, error) {
	if t.URL != "" {
		return p.openRemote(t, item, rate)
	}
	dec, format, err := decode.Open(t.Path)
	if err != nil {
		return nil, err
	}
	tr := &track{item: item, dec: dec, format: format, rate: rate}
	tr.duration = float64(dec.Len()) / float64(format.SampleRate)
	tr.restream()
	return tr, nil
}

// restream rebuilds the chain after a seek: a resampler holds samples of the
// old position.
func (t *track) restream() {
	t.s = t.dec
	if int(t.format.SampleRate) != t.rate {
		t.s = resample.New(resampleQuality, t.format.SampleRate, beep.SampleRate(t.rate), t.dec)
	}
}

// ownRate is the rate a file plays at without resampling; 0 for a remote,
// which is opened at the output's rate, whatever that is.
func (t *track) ownRate() int {
	if t.remote != nil {
		return 0
	}
	return int(t.format.SampleRate)
}

// retarget makes the track stream at rate from where it is: the output
// reopened at another rate.
func (t *track) retarget(rate int) error {
	if rate == t.rate {
		return nil
	}
	at := int64(t.base + t.frames)
	old := int64(t.rate)
	t.rate = rate
	if t.lev != nil {
		t.lev.retarget(rate)
	}
	if t.remote != nil {
		t.base, t.frames = int(at*int64(rate)/old), 0
		t.restream()
		return nil
	}
	return t.seekFrame(int(at * int64(rate) / old))
}

func (t *track) seconds() float64 {
	if t.remote != nil {
		return t.remote.Seconds()
	}
	return float64(t.base+t.frames) / float64(t.rate)
}

// seek moves to sec, clamped to the track.
func (t *track) seek(sec float64) error {
	if t.remote != nil {
		t.base, t.frames = 0, 0
		if err := t.remote.Seek(sec); err != nil {
			return fmt.Errorf("seek %s: %w", t.item.Title, err)
		}
		t.restream()
		return nil
	}
	return t.seekFrame(int(math.Round(sec * float64(t.rate))))
}

// seekFrame moves to a frame at the track's output rate. Integer arithmetic
// keeps rewinds sample-exact where a round trip through seconds could lose a
// sample.
func (t *track) seekFrame(frame int) error {
	src := int64(t.format.SampleRate)
	if t.remote != nil { // only ever back, by what the device did not play
		back := max(0, t.base+t.frames-frame)
		t.frames -= back
		if src == int64(t.rate) {
			t.remote.Back(back)
			return nil
		}
		// A resampler holds what it read ahead: start it afresh.
		t.remote.Back(int(int64(back) * src / int64(t.rate)))
		t.restream()
		return nil
	}
	n := max(0, min(int(int64(frame)*src/int64(t.rate)), t.dec.Len()))
	if err := t.dec.Seek(n); err != nil {
		return fmt.Errorf("seek %s: %w", t.item.Title, err)
	}
	t.base = int(int64(n) * int64(t.rate) / src)
	t.frames = 0
	t.restream()
	return nil
}

func (t *track) close() { t.dec.Close() }
