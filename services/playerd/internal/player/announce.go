package player

import (
	"context"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/resample"
)

// clip is one announcement: stereo frames at output.ClipRate, converted
// period by period to the output's rate where that differs, so a long clip
// costs no more at its start than a short one.
type clip struct {
	pcm     [][2]float64
	off     int // frames of pcm played
	begun   bool
	started chan struct{}
	done    chan struct{}
	err     error
	level   Level // measured as it arrived; normalised like music (clipGain)

	conv     *resample.Resampler // pcm from from on, at rate; nil at ClipRate
	rate     int
	from, to int // to: frames conv gave
}

// fill fills buf with the clip's next frames at rate and reports whether
// the clip has ended.
func (c *clip) fill(buf [][2]float64, rate int) (int, bool) {
	if !c.begun {
		c.begun = true
		close(c.started)
	}
	if rate == output.ClipRate {
		c.conv = nil
		n := copy(buf, c.pcm[c.off:])
		c.off += n
		return n, c.off >= len(c.pcm)
	}
	if c.conv == nil || c.rate != rate { // the first period, or the output reopened at another rate
		c.conv = resample.New(resampleQuality, output.ClipRate, beep.SampleRate(rate), &pcmReader{c.pcm[c.off:]})
		c.rate, c.from, c.to = rate, c.off, 0
	}
	n, ok := c.conv.Stream(buf)
	c.to += n
	c.off = min(len(c.pcm), c.from+int(int64(c.to)*output.ClipRate/int64(rate)))
	return n, !ok || n < len(buf)
}

// pcmReader streams frames from memory.
type pcmReader struct{ pcm [][2]float64 }

func (r *pcmReader) Stream(s [][2]float64) (int, bool) {
	n := copy(s, r.pcm)
	r.pcm = r.pcm[n:]
	return n, n > 0
}

func (r *pcmReader) Err() error { return nil }

// Announce plays pcm (stereo, at output.ClipRate) over the music: running music is
// paused for it and continues afterwards exactly where it stopped; paused
// music stays paused. It returns once the clip has started; done closes when
// it has been played. Announcements play one after another in the order they
// arrive.
func (p *Player) Announce(ctx context.Context, pcm [][2]float64) (<-chan struct{}, error) {
	if len(pcm) == 0 {
		return nil, fault.New(fault.Invalid, "empty announcement")
	}
	// Measured here, in the caller's goroutine: a few seconds of speech
	// take a few milliseconds, which the player's loop must not spend.
	c := &clip{pcm: pcm, started: make(chan struct{}), done: make(chan struct{}), level: clipLevel(pcm)}
	if _, err := p.send(ctx, request{clip: c}); err != nil {
		return nil, err
	}
	select {
	case <-c.started:
		return c.done, nil
	case <-c.done: // failed before it started
		return nil, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *Player) enqueueClip(c *clip) error {
	if len(p.clips) >= maxAnnouncements {
		return fault.Retry(fault.Busy, announceRetry, "%d announcements are waiting", len(p.clips))
	}
	if len(p.clips) == 0 {
		p.musicWas = p.state
		if p.state == Playing {
			p.silence()
			p.state = Paused
		}
		p.ensureSink()
		// Music and announcements have their own volumes: no ramp between them.
		p.gain = p.clipGain(c)
	}
	p.clips = append(p.clips, c)
	return nil
}

// finishClip retires the clip that just played; after the last one the
// music returns to what it was (or what commands meanwhile asked for).
func (p *Player) finishClip() {
	c := p.clips[0]
	p.clips = p.clips[1:]
	if len(p.clips) > 0 {
		close(c.done)
		return
	}
	if p.out != nil {
		if err := p.out.Drain(); err != nil {
			p.deviceFailed(err)
		}
	}
	// A queue that started meanwhile waited for the device to be free.
	p.syncRate()
	close(c.done)
	p.gain = p.musicGain()
	if p.musicWas == Playing && p.cur != nil {
		p.state = Playing
		p.fadeIn = rampFrames
	} else if p.musicWas != Playing {
		p.state = p.musicWas
	}
}

func (p *Player) failClips(err error) {
	for _, c := range p.clips {
		c.err = err
		close(c.done)
	}
	p.clips = nil
}
