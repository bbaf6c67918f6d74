package player

import (
	"errors"
	"math"

	"github.com/storybox/storybox/services/internal/fault"
)

// command applies one command in the player goroutine; its fields are
// checked (checkFields) and the gate has admitted it.
func (p *Player) command(c Command) error {
	switch c.Action {
	case ActVolume:
		return p.setVolume(int(math.Round(*c.Value)))
	case ActVolumeDelta:
		return p.setVolume(p.volume + int(math.Round(*c.Value)))
	case ActFolder:
		return p.startFolder(c.FolderID, 0, false)
	case ActResume:
		return p.startFolder(c.FolderID, *c.ItemIndex, true)
	case ActStop:
		return p.stop()
	case ActSleepTimer:
		if p.cfg.Gate == nil {
			return fault.New(fault.Unavailable, "no sleep timer without parental rules")
		}
		return nil // the gate's commit sets it
	}
	if len(p.queue) == 0 {
		return conflict("queue is empty")
	}
	switch c.Action {
	case ActPlay:
		return p.play()
	case ActPause:
		p.pause()
		return nil
	case ActToggle:
		if p.intent() == Playing {
			p.pause()
			return nil
		}
		return p.play()
	case ActNext:
		return p.skipTo(p.index + 1)
	case ActPrevious:
		if p.cur != nil && p.cur.seconds() > previousThreshold || p.index <= 0 {
			return p.skipTo(max(p.index, 0))
		}
		return p.skipTo(p.index - 1)
	case ActSeek:
		return p.seek(*c.Value)
	}
	return invalid("unknown action %q", c.Action)
}

// checkFields refuses fields an action does not take and requires the ones
// it does, so a typo never silently does something else.
func checkFields(c Command) error {
	needValue, needFolder, needIndex := false, false, false
	switch c.Action {
	case ActSeek, ActVolume, ActVolumeDelta:
		needValue = true
	case ActFolder:
		needFolder = true
	case ActResume:
		needFolder, needIndex = true, true
	case ActToggle, ActPlay, ActPause, ActStop, ActNext, ActPrevious:
	case ActSleepTimer:
		return checkSleepTimer(c)
	case "":
		return invalid("action is required")
	default:
		return invalid("unknown action %q", c.Action)
	}
	switch {
	case c.Until != "":
		return invalid("field \"value\" must be a number for %s, not %q", c.Action, c.Until)
	case needValue && c.Value == nil:
		return invalid("%s needs a numeric value", c.Action)
	case !needValue && c.Value != nil:
		return invalid("%s takes no value", c.Action)
	case needFolder && c.FolderID == "":
		return invalid("%s needs folder_id", c.Action)
	case !needFolder && c.FolderID != "":
		return invalid("%s takes no folder_id", c.Action)
	case needIndex && c.ItemIndex == nil:
		return invalid("%s needs item_index", c.Action)
	case !needIndex && c.ItemIndex != nil:
		return invalid("%s takes no item_index", c.Action)
	}
	return checkNumber(c)
}

func checkNumber(c Command) error {
	if c.Value != nil && (math.IsNaN(*c.Value) || math.IsInf(*c.Value, 0) || math.Abs(*c.Value) > 1e9) {
		return invalid("invalid value")
	}
	return nil
}

// checkSleepTimer: value is minutes (the gate judges the range) or the word
// "track" or "folder"; nothing else.
func checkSleepTimer(c Command) error {
	switch {
	case c.FolderID != "" || c.ItemIndex != nil:
		return invalid("sleep_timer takes only value")
	case c.Value == nil && c.Until == "":
		return invalid("sleep_timer needs value: minutes, 0 to cancel, or \"track\" or \"folder\"")
	case c.Until != "" && c.Until != UntilTrack && c.Until != UntilFolder:
		return invalid("sleep_timer value must be minutes, \"track\" or \"folder\", not %q", c.Until)
	}
	return checkNumber(c)
}

// intent is the music state the user asked for; during an announcement the
// music is held and this is what it returns to.
func (p *Player) intent() State {
	if len(p.clips) > 0 {
		return p.musicWas
	}
	return p.state
}

func (p *Player) setIntent(s State) {
	if len(p.clips) > 0 {
		p.musicWas = s
		return
	}
	p.state = s
}

// setVolume is the only way the volume changes: every path is capped.
func (p *Player) setVolume(v int) error {
	v = p.clampVolume(v)
	if v != p.volume {
		p.volume = v
		p.dirty = true
		p.retake()
	}
	return nil
}

func (p *Player) play() error {
	if p.intent() == Playing && p.state != Failed {
		return nil
	}
	starting := p.intent() == Stopped // a queue starts, not a pause ends
	p.retryRemote()
	if p.cur == nil {
		if err := p.openAt(max(p.index, 0), 0); err != nil {
			return p.playError(err)
		}
	}
	if starting {
		p.matchRate()
	}
	p.setIntent(Playing)
	p.lastErr = ""
	p.fadeIn = rampFrames
	p.ensureSink()
	if p.out == nil && p.sinkErr != nil {
		p.state = Failed
		p.lastErr = "audio output: " + p.sinkErr.Error()
	}
	return nil
}

func (p *Player) playError(err error) error {
	if errors.Is(err, errNothingPlayable) {
		return conflict("%v", err)
	}
	return conflict("cannot play: %v", err)
}

func (p *Player) pause() {
	if p.intent() != Playing && p.state != Failed {
		return
	}
	if len(p.clips) == 0 {
		p.silence()
	}
	p.setIntent(Paused)
	if p.state == Failed {
		p.state = Paused
	}
	p.recordResume()
	p.dirty = true
}

func (p *Player) stop() error {
	if len(p.clips) == 0 {
		p.silence()
	}
	p.recordResume()
	p.setIntent(Stopped)
	if p.state == Failed {
		p.state = Stopped
	}
	if p.cur != nil {
		if err := p.cur.seek(0); err != nil {
			p.closeTrack()
		}
	}
	p.dirty = true
	return nil
}

// skipTo moves to queue entry i, keeping play or pause. Past the end the
// player stops, as the real box does.
func (p *Player) skipTo(i int) error {
	playing := p.intent() == Playing
	if playing && len(p.clips) == 0 {
		p.silence()
	}
	p.recordResume()
	if i >= len(p.queue) {
		if p.folder != nil {
			delete(p.saved.Resume, p.folder.ID)
		}
		p.setIntent(Stopped)
		if err := p.openAt(0, 0); err != nil {
			p.closeTrack()
		}
		p.dirty = true
		return nil
	}
	if err := p.openAt(i, 0); err != nil {
		return p.playError(err)
	}
	p.fadeIn = rampFrames
	return nil
}

func (p *Player) seek(sec float64) error {
	if p.cur == nil || p.intent() == Stopped {
		return conflict("player is not active")
	}
	if p.cur.live() {
		return conflict("a radio station cannot seek")
	}
	if p.cur.duration <= 0 {
		return conflict("duration not available yet")
	}
	if p.intent() == Playing && len(p.clips) == 0 {
		p.silence()
	}
	if err := p.cur.seek(sec); err != nil {
		return conflict("%v", err)
	}
	p.jumps++
	p.fadeIn = rampFrames
	p.recordResume()
	p.dirty = true
	return nil
}

// startFolder replaces the queue and plays. With resume, it starts at item
// index and, if the folder was left in that very track, at that position.
func (p *Player) startFolder(id string, index int, resume bool) error {
	f, ok := p.cfg.Catalog.Folder(id)
	if !ok || len(f.Tracks) == 0 {
		return invalid("unknown or empty folder %q", id)
	}
	if index < 0 || index >= len(f.Tracks) {
		return invalid("item_index %d is outside 0..%d", index, len(f.Tracks)-1)
	}
	pos := 0.0
	if rp, ok := p.saved.Resume[id]; resume && ok && rp.Index == index && rp.TrackID == f.Tracks[index].ID {
		pos = rp.Position
	} else if at, ok := p.episodeResume(f, index); resume && ok {
		pos = at
	}
	if p.intent() == Playing && len(p.clips) == 0 {
		p.silence()
	}
	p.recordResume()
	p.load(f)
	if err := p.openAt(index, pos); err != nil {
		p.setIntent(p.state)
		return p.playError(err)
	}
	p.setIntent(Stopped)
	return p.play()
}
