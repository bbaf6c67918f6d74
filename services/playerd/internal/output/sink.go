// Package output moves rendered audio to where it is heard: a sound card, a WAV
// file or nowhere. The player asks for the rate of what it plays, renders at
// the rate the sink took and hands each period to the Sink; everything device
// specific stays behind this interface.
package output

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultRate is the rate a sink is opened at before anything asked for
// another: what the player plays before it knows what it will play.
const DefaultRate = 48000

// RateFor is the rate to open the output at for music at rate: its own from
// 44.1 to 48 kHz, which the period and the device buffer (counted in frames)
// are made for; at 8 kHz a period would last 128 ms and the buffer a second,
// at 96 kHz the buffer 85 ms. A higher rate is halved until it fits (96 →
// 48 kHz, 88.2 → 44.1 kHz); a lower one plays at DefaultRate.
func RateFor(rate int) int {
	for rate > 48000 {
		rate /= 2
	}
	if rate < 44100 {
		return DefaultRate
	}
	return rate
}

// ClipRate is the rate of announcements, chimes and tones: they are made at
// this rate and the player converts them to the rate its output runs at.
const ClipRate = 48000

// PeriodFrames is how many frames the player renders per Write: about 21 ms at
// 48 kHz, 23 ms at 44.1 kHz, so commands take effect within one period.
const PeriodFrames = 1024

// ErrDeviceLost reports that the device went away (a USB DAC was unplugged).
// The player reports an error state and tries to open the sink again.
var ErrDeviceLost = errors.New("audio device lost")

// Sink consumes stereo frames at its Rate. Only the player goroutine calls it.
type Sink interface {
	// Rate is the sample rate Write takes: the one asked for when the
	// device offers it, else the nearest it offers. It never changes; a
	// new rate takes a new sink.
	Rate() int
	// Write blocks until the device has accepted every frame. It paces the
	// player: a real device blocks while its buffer is full.
	Write(frames [][2]float64) error
	// Drop discards what is buffered and not yet heard: pause, stop and skip
	// are silent at once.
	Drop() error
	// Drain blocks until everything written has been heard (end of playback).
	Drain() error
	Close() error
}

// Delayer is implemented by sinks that buffer audio before it is heard. Delay
// reports how many written frames have not reached the speaker yet, so a
// Stream can resume exactly where listening stopped after a Drop.
type Delayer interface {
	Delay() int
}

// Rewinder is implemented by sinks that can take back written audio that has
// not been heard, without interrupting what is playing. A Stream uses it so
// a volume change is heard within a period rather than after the whole device
// buffer.
type Rewinder interface {
	// Rewind takes back the newest frames, at most frames of them, and
	// reports how many.
	Rewind(frames int) (int, error)
	// MaxRewind is the most frames Rewind can ever give back (the device
	// buffer): how much written audio is worth remembering. 0 means none.
	MaxRewind() int
}

// Filled is implemented by sinks with a device buffer that the player fills
// ahead in batches: it writes periods while the buffer has room for one, then
// sleeps, still taking commands, until only FillMargin periods are left.
// Waking once per batch instead of blocking in Write for every period is most
// of what playing costs besides decoding: each wakeup costs the Go runtime a
// timer, a netpoll, waking a second thread and often a burst of its system
// monitor's polling.
type Filled interface {
	Delayer
	// Capacity is how many frames the device buffer holds.
	Capacity() int
}

// FillMargin is how many periods a Filled sink still holds when the player
// wakes to fill it: 85 ms at 48 kHz, the cushion against a late wakeup. The
// rest of the buffer is one batch: twelve periods of a sixteen-period buffer
// (the ALSA sink asks for sixteen), so the player wakes about four times a
// second, and a command that comes while it sleeps is carried out at once.
const FillMargin = 4

// Opener opens a sink at rate, or as near to it as the device goes (the
// sink's Rate says). The player calls it at start, after the device was lost,
// and when a queue starts whose music has another rate than the open sink;
// it closes the previous sink first (a sound card is opened once at a time).
type Opener func(rate int) (Sink, error)

// Parse turns an -output flag value into an Opener:
//
//	null       paced to real time, discards the audio
//	wav:FILE   paced to real time, writes what the speaker would hear
//	alsa[:DEV] a kernel ALSA playback device (see alsa.go)
func Parse(spec string) (Opener, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "null":
		if arg != "" {
			return nil, fmt.Errorf("output %q: null takes no argument", spec)
		}
		return func(rate int) (Sink, error) { return NewNull(rate), nil }, nil
	case "wav":
		if arg == "" {
			return nil, fmt.Errorf("output %q: wav needs a file name (wav:FILE)", spec)
		}
		return WAVOpener(arg, true), nil
	case "alsa":
		return alsaOpener(arg)
	}
	return nil, fmt.Errorf("output %q: unknown kind %q (want null, wav:FILE or alsa[:CARD,DEV])", spec, kind)
}
