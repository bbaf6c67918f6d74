package player

import (
	"context"

	"github.com/storybox/storybox/services/playerd/internal/auth"
)

// Calm mode, the parent's "kindergarten" setting: a folder that a child's
// card or button starts while a track plays does not cut the track off. It
// waits here, in the goroutine that owns what plays, so no other part of
// the box keeps a second queue that could disagree with the player; it
// starts on the sample after the track ends and the status shows it
// meanwhile (Status.Waiting). Everything else acts at once: command cards,
// buttons other than folders, the screen, the parent's API. Stop and a
// folder started at once drop what waits, a newer card replaces it, and so
// does turning calm mode off. A station never ends, so over a station a
// card starts at once.

// Waiting is the folder that waits for the current track to end.
type Waiting struct {
	FolderID string `json:"folder_id"`
	Folder   string `json:"folder"`
}

// waiting is a deferred folder or resume command, with the caller's
// context for the gate, which judges the start again when it happens.
type waiting struct {
	ctx context.Context
	cmd Command
	st  *Waiting // built once: every period's snapshot shares it
}

// SetCalm turns calm mode on or off; off drops what waits.
func (p *Player) SetCalm(ctx context.Context, on bool) (Status, error) {
	return p.send(ctx, request{change: func() error {
		p.cfg.Calm = on
		if !on {
			p.waiting = nil
		}
		return nil
	}})
}

// defers reports whether r is a child's start to hold back until the
// track ends.
func (p *Player) defers(r request) bool {
	if !p.cfg.Calm || r.clip != nil || r.ctx == nil || (r.cmd.Action != ActFolder && r.cmd.Action != ActResume) {
		return false
	}
	if via := auth.CallerFrom(r.ctx).Via; via != auth.Card && via != auth.Button {
		return false
	}
	return p.intent() == Playing && p.cur != nil && !p.cur.live()
}

// wait holds r back; the folder was checked by the gate, and its start is
// checked once more when it comes.
func (p *Player) wait(r request) error {
	f, ok := p.cfg.Catalog.Folder(r.cmd.FolderID)
	if !ok || len(f.Tracks) == 0 {
		return invalid("unknown or empty folder %q", r.cmd.FolderID)
	}
	if r.cmd.ItemIndex != nil && (*r.cmd.ItemIndex < 0 || *r.cmd.ItemIndex >= len(f.Tracks)) {
		return invalid("item_index %d is outside 0..%d", *r.cmd.ItemIndex, len(f.Tracks)-1)
	}
	p.waiting = &waiting{ctx: context.WithoutCancel(r.ctx), cmd: r.cmd, st: &Waiting{FolderID: f.ID, Folder: f.Name}}
	return nil
}

// startWaiting starts what waits, the track having ended. The folder that
// played is left as its track's end leaves it, so its resume point is
// right: at the start of its next track, or ended as a queue ends (single
// mode's next story included). The rules may refuse the start by now
// (bedtime began): the folder then goes on, or has ended, as it would have
// without the card.
func (p *Player) startWaiting() {
	w := p.waiting
	p.waiting = nil
	next, more := p.following(p.index)
	if p.repeat == RepeatTrack {
		next, more = p.index, true
	}
	var goOn func()
	if more && !p.stopAtEnd {
		if p.out != nil {
			// The end of the track is heard before the next folder begins.
			if err := p.out.Drain(); err != nil {
				p.deviceFailed(err)
			}
		}
		// Stopped for a moment, as at a queue's end: the next folder
		// starts from silence, and nothing of this one's next track is
		// rendered for a fade-out.
		p.state = Stopped
		if p.openAt(next, 0) != nil {
			p.closeTrack()
		}
		goOn = func() { _ = p.play() }
	} else {
		p.endOfQueue()
	}
	v, err := p.admit(request{ctx: w.ctx, cmd: w.cmd})
	if err == nil {
		err = p.command(w.cmd)
	}
	if err != nil {
		if goOn != nil {
			goOn()
		}
		return
	}
	if v.Commit != nil {
		v.Commit()
	}
	p.dirty = true
}

func (p *Player) waitingStatus() *Waiting {
	if p.waiting == nil {
		return nil
	}
	return p.waiting.st
}

func sameWaiting(a, b *Waiting) bool {
	return a == b || a != nil && b != nil && *a == *b
}
