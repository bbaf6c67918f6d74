package player

import (
	"context"

	"github.com/storybox/storybox/services/internal/fault"
)

// clip is one announcement: stereo frames at output.Rate.
type clip struct {
	pcm     [][2]float64
	off     int
	started chan struct{}
	done    chan struct{}
	err     error
}

func (c *clip) fill(buf [][2]float64) (int, bool) {
	if c.off == 0 {
		close(c.started)
	}
	n := copy(buf, c.pcm[c.off:])
	c.off += n
	return n, c.off >= len(c.pcm)
}

// Announce plays pcm (stereo, 48 kHz) over the music: running music is
// paused for it and continues afterwards exactly where it stopped; paused
// music stays paused. It returns once the clip has started; done closes when
// it has been played. Announcements play one after another in the order they
// arrive.
func (p *Player) Announce(ctx context.Context, pcm [][2]float64) (<-chan struct{}, error) {
	if len(pcm) == 0 {
		return nil, fault.New(fault.Invalid, "empty announcement")
	}
	c := &clip{pcm: pcm, started: make(chan struct{}), done: make(chan struct{})}
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
		p.gain = gainFor(p.clampVolume(p.cfg.AnnounceVolume))
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
	close(c.done)
	p.gain = gainFor(p.volume)
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
