package player

import (
	"context"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

var errOutputGone = fault.New(fault.Unavailable, "the headphones were unplugged")

// The outputs the status names (Status.Output).
const (
	OutputSpeaker    = "speaker"
	OutputHeadphones = "headphones"
)

// Headphones is a second output with a cap of its own: USB headphones, a USB
// sound card with a headphone jack, or a jack on the sound board.
type Headphones struct {
	// Device names what Open opens, so that a change of the cap alone is
	// told from another device (which reopens the output).
	Device string
	Open   output.Opener
	// MaxVolume caps every volume while the headphones play (1..100), in
	// place of Config.MaxVolume.
	MaxVolume int
}

// SetHeadphones moves playback to the headphones, or back to the speaker
// when h is nil. It is the one way the output changes, and it runs in the
// player goroutine like every command, so the sink still has one writer.
//
// Plugged in: what plays fades out on the speaker and goes on on the
// headphones, the volume lowered to their cap. Unplugged: the music pauses
// (a child listening at night is not startled by the speaker) and the
// announcements waiting are dropped for the same reason; the volume stays
// what it was on the headphones, so the speaker is never louder than they
// were until someone turns it up.
func (p *Player) SetHeadphones(ctx context.Context, h *Headphones) (Status, error) {
	if h != nil && (h.Open == nil || h.MaxVolume < 1 || h.MaxVolume > 100) {
		return Status{}, invalid("headphones need an output and a cap of 1..100")
	}
	return p.send(ctx, request{change: func() error {
		if h == nil {
			p.unplugHeadphones()
			return nil
		}
		p.plugHeadphones(*h)
		return nil
	}})
}

func (p *Player) plugHeadphones(h Headphones) {
	if p.phones != nil && p.phones.Device == h.Device {
		p.phones.MaxVolume = h.MaxVolume
		_ = p.setVolume(p.volume) // a lower cap is heard within a period
		return
	}
	p.silence()
	p.closeSink()
	p.phones = &h
	_ = p.setVolume(p.volume)
	p.enterOutput()
}

func (p *Player) unplugHeadphones() {
	if p.phones == nil {
		return
	}
	// The device is likely gone already: the fade fails or plays to
	// nowhere, and either way the queue is moved back to what was heard.
	if p.out != nil {
		var src output.Source
		if p.playingMusic() {
			src = music{p}
		}
		_ = p.out.FadeOut(src)
	}
	p.closeSink()
	if len(p.clips) > 0 {
		p.failClips(errOutputGone)
		p.state = p.musicWas
	}
	if p.state == Playing || p.state == Failed {
		p.state = Paused
		p.recordResume()
		p.dirty = true
	}
	p.phones = nil
	p.enterOutput()
}

// enterOutput opens the output just chosen; failing to is what any lost
// device is, retried about once a second.
func (p *Player) enterOutput() {
	p.sinkErr, p.lastErr = nil, ""
	if p.state == Failed {
		p.state = Playing
	}
	// From silence straight to the new output's gain: a ramp from the gain
	// before the switch would start above the headphones' cap.
	p.fadeIn = rampFrames
	if len(p.clips) > 0 {
		p.gain = gainFor(p.clampVolume(p.cfg.AnnounceVolume))
	} else {
		p.gain = gainFor(p.volume)
	}
	p.ensureSink()
	p.publish(true)
}

// closeSink closes the output without a word to OnDevice: leaving it is
// no failure.
func (p *Player) closeSink() {
	if p.out != nil {
		_ = p.out.Close()
		p.out = nil
	}
}

// opener is the output's: the headphones' while they are plugged in.
func (p *Player) opener() output.Opener {
	if p.phones != nil {
		return p.phones.Open
	}
	return p.cfg.Open
}

// outputName is Status.Output.
func (p *Player) outputName() string {
	if p.phones != nil {
		return OutputHeadphones
	}
	return OutputSpeaker
}

// outputMax is the cap of the output playing, before the gate's.
func (p *Player) outputMax() int {
	if p.phones != nil {
		return p.phones.MaxVolume
	}
	return p.cfg.MaxVolume
}
