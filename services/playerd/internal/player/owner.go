package player

import (
	"context"
	"maps"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Changes the owner of the player makes (settings, library management,
// restore). They go through the same request channel as commands, so the
// player goroutine stays the only one that touches its state.

// Volumes are the volume limits of the settings (1..100 each; Min
// 0..Max).
type Volumes struct {
	Max, Start, Announce, Min int
}

// SetVolumes changes the volume limits at once. A volume above the new
// maximum is lowered to it, one below the new minimum raised to it, the
// way a volume command moves it (retaken from the device, so it is heard
// within a period); an announcement playing moves to its new volume within
// a period.
func (p *Player) SetVolumes(ctx context.Context, v Volumes) (Status, error) {
	for _, x := range []int{v.Max, v.Start, v.Announce} {
		if x < 1 || x > 100 {
			return Status{}, invalid("volume limits must be 1..100: %+v", v)
		}
	}
	if v.Min < 0 || v.Min > v.Max {
		return Status{}, invalid("the minimum volume must be 0..%d: %+v", v.Max, v)
	}
	return p.send(ctx, request{change: func() error {
		p.cfg.MaxVolume, p.cfg.StartVolume, p.cfg.AnnounceVolume, p.cfg.MinVolume = v.Max, v.Start, v.Announce, v.Min
		return p.setVolume(p.volume)
	}})
}

// MoveFolders follows renamed and deleted folders (keyed by their old id):
// resume points move to the new ids, or are dropped with the folder. A
// folder that is loaded is unloaded first, with its resume point recorded
// (its files are no longer where the queue has them), and the player
// stops.
func (p *Player) MoveFolders(ctx context.Context, moves map[string]library.Move) error {
	_, err := p.send(ctx, request{change: func() error {
		if p.folder != nil {
			if _, ok := moves[p.folder.ID]; ok {
				p.recordResume()
				p.unload()
			}
		}
		for old, m := range moves {
			rp, ok := p.saved.Resume[old]
			if !ok {
				continue
			}
			delete(p.saved.Resume, old)
			if m.NewID != "" {
				if id, ok := m.Tracks[rp.TrackID]; ok {
					rp.TrackID = id
				}
				p.saved.Resume[m.NewID] = rp
			}
			p.dirty = true
		}
		return nil
	}})
	return err
}

// unload empties the queue and stops.
func (p *Player) unload() {
	if p.intent() == Playing && len(p.clips) == 0 {
		p.silence()
	}
	p.closeTrack()
	p.dropPrefetch()
	p.folder, p.queue, p.index = nil, nil, -1
	p.mode, p.shuffle, p.repeat, p.stopAtEnd, p.order = ModeNormal, false, RepeatOff, false, nil
	p.setIntent(Stopped)
	if p.state == Failed {
		p.state = Stopped
	}
	p.lastErr = ""
	p.dirty = true
}

// ReplaceResume replaces every resume point (a restored backup); like
// every change, it is saved at once. The folder that is loaded keeps playing; where it is left is
// recorded again as listening goes on.
func (p *Player) ReplaceResume(ctx context.Context, resume map[string]state.ResumePoint) error {
	resume = maps.Clone(resume)
	if resume == nil {
		resume = map[string]state.ResumePoint{}
	}
	_, err := p.send(ctx, request{change: func() error {
		p.saved.Resume = resume
		p.dirty = true
		return nil
	}})
	return err
}
