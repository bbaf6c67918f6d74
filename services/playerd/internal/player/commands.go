package player

import (
	"errors"
	"math"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/state"
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
		return p.startFolder(c.FolderID, 0, false, c.Mode)
	case ActResume:
		return p.startFolder(c.FolderID, *c.ItemIndex, true, "")
	case ActStop:
		return p.stop()
	case ActSleepTimer:
		if p.cfg.Gate == nil {
			return fault.New(fault.Unavailable, "no sleep timer without parental rules")
		}
		return nil // the gate's commit sets it
	case ActShuffle:
		// Without a queue too: the switch then waits for play, and a
		// folder starting sets it from its mode.
		p.setShuffle(*c.On)
		return nil
	case ActRepeat:
		p.setRepeat(c.Word)
		return nil
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
		if n, ok := p.following(p.index); ok {
			return p.skipTo(n)
		}
		return p.skipTo(len(p.queue))
	case ActPrevious:
		// In shuffle, "before" is the track played before: the order.
		if b, ok := p.before(p.index); ok && (p.cur == nil || p.cur.seconds() <= previousThreshold) {
			return p.skipTo(b)
		}
		return p.skipTo(max(p.index, 0))
	case ActSeek:
		return p.seek(*c.Value)
	case ActSeekDelta:
		return p.seekDelta(*c.Value)
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
	case ActShuffle, ActRepeat:
		return checkSwitch(c)
	case ActSeekDelta:
		needValue = true
	case "":
		return invalid("action is required")
	default:
		return invalid("unknown action %q", c.Action)
	}
	switch {
	case c.Mode != "" && c.Action != ActFolder:
		return invalid("%s takes no mode", c.Action)
	case c.Mode != "" && !c.Mode.Valid():
		return invalid("unknown mode %q (one of %v)", c.Mode, Modes)
	case c.Word != "":
		return invalid("field \"value\" must be a number for %s, not %q", c.Action, c.Word)
	case c.On != nil:
		return invalid("field \"value\" must be a number for %s, not %t", c.Action, *c.On)
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

// checkSwitch: shuffle takes true or false, repeat "off", "folder" or
// "track", and nothing else.
func checkSwitch(c Command) error {
	switch {
	case c.FolderID != "" || c.ItemIndex != nil || c.Mode != "":
		return invalid("%s takes only value", c.Action)
	case c.Action == ActShuffle && (c.On == nil || c.Value != nil || c.Word != ""):
		return invalid("shuffle needs value true or false")
	case c.Action == ActRepeat && (c.Word == "" || c.Value != nil || c.On != nil):
		return invalid("repeat needs value \"off\", \"folder\" or \"track\"")
	case c.Action == ActRepeat && !ValidRepeat(c.Word):
		return invalid("repeat value must be \"off\", \"folder\" or \"track\", not %q", c.Word)
	}
	return nil
}

// checkSleepTimer: value is minutes (the gate judges the range) or the word
// "track" or "folder"; nothing else.
func checkSleepTimer(c Command) error {
	switch {
	case c.FolderID != "" || c.ItemIndex != nil || c.Mode != "" || c.Word != "" || c.On != nil:
		return invalid("sleep_timer takes only value: minutes, 0 to cancel, or \"track\" or \"folder\"")
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
		if err := p.openAt(p.first(), 0); err != nil {
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

// startFolder replaces the queue and plays, under mode or, when that is
// "", the folder's own (modes.go). With resume, it starts at item index
// and, if the folder was left in that very track, at that position; a
// resume goes on in the mode the folder was left in, a shuffled folder in
// the order it was left in.
func (p *Player) startFolder(id string, index int, resume bool, mode Mode) error {
	f, ok := p.cfg.Catalog.Folder(id)
	if !ok || len(f.Tracks) == 0 {
		return invalid("unknown or empty folder %q", id)
	}
	if index < 0 || index >= len(f.Tracks) {
		return invalid("item_index %d is outside 0..%d", index, len(f.Tracks)-1)
	}
	// Where the folder was left, before leaving what plays now records
	// the position it is at (a stopped queue is at 0).
	var last *state.ResumePoint
	if rp, ok := p.saved.Resume[id]; ok && rp.Index < len(f.Tracks) && rp.TrackID == f.Tracks[rp.Index].ID {
		last = &rp
	}
	switch {
	case mode != "":
	case resume && last != nil && Mode(last.Mode).Valid():
		mode = Mode(last.Mode)
	default:
		mode = p.folderMode(id)
	}
	var order []int
	if mode == ModeShuffle {
		switch {
		case resume && last != nil && len(last.Order) == len(f.Tracks) && isPermutation(last.Order):
			order = last.Order
		case resume:
			order = p.newOrder(len(f.Tracks), index, -1)
		default:
			order = p.newOrder(len(f.Tracks), -1, -1)
		}
	}
	pos := 0.0
	if !resume {
		index, pos = p.startIndex(f, mode, order, last)
	} else if last != nil && last.Index == index {
		pos = last.Position
	} else if at, ok := p.episodeResume(f, index); ok {
		pos = at
	}
	if p.intent() == Playing && len(p.clips) == 0 {
		p.silence()
	}
	p.recordResume()
	p.load(f)
	p.setModes(mode, order)
	if err := p.openAt(index, pos); err != nil {
		p.setIntent(p.state)
		return p.playError(err)
	}
	p.setIntent(Stopped)
	return p.play()
}
