package player

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

// renderPeriod renders one period of whatever is audible and writes it; the
// sink's Write paces the loop.
func (p *Player) renderPeriod() {
	buf := p.buf[:output.PeriodFrames]
	clear(buf)
	var n int
	var err error
	clipDone := false
	if len(p.clips) > 0 {
		n, clipDone = p.clips[0].fill(buf, p.rate)
		p.rampGains(p.gains[:n], p.clipGain(p.clips[0]))
		err = p.out.WriteOnce(buf[:n], p.gains[:n])
	} else {
		n = p.fillMusic(buf, true)
		p.rampMusic(p.gains[:n])
		err = p.out.Write(buf[:n], p.gains[:n])
	}
	if err != nil {
		p.rewind(n)
		p.deviceFailed(err)
		return
	}
	p.maybePrefetch()
	p.checkRemote()
	if clipDone {
		p.finishClip()
	} else if n < len(buf) && len(p.clips) == 0 && p.state == Playing {
		if p.waiting != nil {
			p.startWaiting()
		} else {
			p.endOfQueue()
		}
	}
	p.publish(false)
}

// fillMusic streams the queue into buf, moving on to the next track on the
// sample after the previous one ended (gapless) when advance is set.
func (p *Player) fillMusic(buf [][2]float64, advance bool) int {
	n := 0
	for n < len(buf) && p.cur != nil {
		k, ok := p.cur.s.Stream(buf[n:])
		if p.cur.lev != nil {
			p.cur.lev.add(buf[n : n+k])
		}
		n += k
		p.cur.frames += k
		if ok && k > 0 {
			continue
		}
		if !advance {
			break
		}
		if err := p.cur.dec.Err(); err != nil {
			p.cfg.OnSkip(p.trackAt(p.index), err)
		} else {
			p.trackEnded()
		}
		if p.waiting != nil {
			break // calm mode: the folder that waited starts now
		}
		if p.repeat == RepeatTrack && p.loopTrack() {
			continue
		}
		if p.stopAtEnd {
			break
		}
		before := p.musicGain()
		next, ok := p.following(p.index)
		if !ok || p.openFrom(next) != nil {
			break
		}
		p.joins = append(p.joins, trackJoin{at: n, before: before})
	}
	return n
}

// endOfQueue: the last track has been heard. The queue stays, ready to play
// again from its start, and the folder no longer needs a resume point.
func (p *Player) endOfQueue() {
	if p.out != nil {
		if err := p.out.Drain(); err != nil {
			p.deviceFailed(err)
		}
	}
	p.trackEnded()
	p.state = Stopped
	p.dirty = true
	if p.stopAtEnd {
		p.endOfStart()
		return
	}
	if p.folder != nil {
		delete(p.saved.Resume, p.folder.ID)
	}
	if p.shuffle { // the next play is a new cycle
		p.order = p.newOrder(len(p.queue), -1, p.index)
	}
	if p.openAt(p.first(), 0) != nil {
		p.closeTrack()
	}
}

// silence stops the sound without a click (output.Stream.FadeOut) and leaves
// the track where the fade began.
func (p *Player) silence() {
	if p.out == nil {
		return
	}
	var src output.Source
	if p.playingMusic() {
		src = music{p}
	}
	if err := p.out.FadeOut(src); err != nil {
		p.deviceFailed(err)
	}
}

// retake makes a volume change heard within a period instead of after the
// device buffer: the output plays what the device has not played yet again at
// the new gain (output.Stream.Retake).
func (p *Player) retake() {
	if p.out == nil || !p.playingMusic() {
		return
	}
	target := p.musicGain()
	retaken, err := p.out.Retake(target, music{p})
	if retaken {
		// The output ramped from the gain left in the device, a fade-in
		// still in the buffer included: the next period goes on from target.
		p.gain, p.fadeIn = target, 0
	}
	if err != nil {
		p.deviceFailed(err)
	}
}

// playingMusic reports whether what the output plays is the queue's music.
func (p *Player) playingMusic() bool {
	return p.state == Playing && p.cur != nil && len(p.clips) == 0
}

// music is the queue as the output's Source.
type music struct{ p *Player }

func (m music) Back(frames int) { m.p.rewind(frames) }

func (m music) Next(pre [][2]float64, gains []float64) int {
	n := m.p.fillMusic(pre, false)
	m.p.rampMusic(gains[:n])
	return n
}

// rewind moves the current track back by frames device frames (at most to
// its start).
func (p *Player) rewind(frames int) {
	if p.cur == nil || frames <= 0 {
		return
	}
	if err := p.cur.seekFrame(p.cur.base + p.cur.frames - frames); err != nil {
		p.cfg.OnSkip(p.trackAt(p.index), err)
	}
}

// load replaces the queue with a folder's tracks, nothing open yet.
func (p *Player) load(f library.Folder) {
	p.closeTrack()
	p.dropPrefetch()
	p.folder = &f
	p.queue = make([]QueueItem, len(f.Tracks))
	for i, t := range f.Tracks {
		p.queue[i] = QueueItem{
			ID: t.ID, Title: t.Title, Artist: t.Artist, Album: t.Album,
			Duration: t.Duration, Provider: cmp.Or(t.Provider, library.ProviderLocal),
			ResumePolicy: cmp.Or(t.ResumePolicy, library.ResumePosition),
		}
	}
	p.index = -1
	p.dirty = true
}

func (p *Player) trackAt(i int) library.Track {
	if p.folder == nil || i < 0 || i >= len(p.folder.Tracks) {
		return library.Track{}
	}
	return p.folder.Tracks[i]
}

func (p *Player) closeTrack() {
	if p.cur != nil {
		p.cur.close()
		p.cur = nil
	}
}

var errNothingPlayable = errors.New("no track in this folder can be played")

// openAt opens track i at pos seconds, skipping tracks that cannot be
// decoded. When nothing in the whole queue plays, the player is in error.
func (p *Player) openAt(i int, pos float64) error {
	if err := p.openFrom(i); err != nil {
		return err
	}
	p.jumps++
	if pos > 0 && p.index == i {
		if err := p.cur.seek(pos); err != nil {
			p.cfg.OnSkip(p.trackAt(i), err)
		}
	}
	return nil
}

// openFrom opens entry i or, when it does not open, the first after it in
// the play order that does.
func (p *Player) openFrom(i int) error {
	p.closeTrack()
	for j, more := i, i >= 0 && i < len(p.queue); more; j, more = p.after(j) {
		t, err, ok := p.takePrefetch(j)
		if !ok {
			t, err = p.openTrack(p.trackAt(j), p.queue[j], p.rate)
		} else if err == nil {
			if err = t.retarget(p.rate); err != nil { // opened before the output reopened
				t.close()
			}
		}
		if err != nil {
			p.cfg.OnSkip(p.trackAt(j), err)
			continue
		}
		p.cur, p.index = t, j
		p.normalizeTrack(t, j)
		p.lastErr = ""
		p.dirty = true
		return nil
	}
	if !p.anyPlayable(i) {
		p.state = Failed
		p.lastErr = errNothingPlayable.Error()
		return errNothingPlayable
	}
	return fmt.Errorf("no playable track from %d on", i)
}

// anyPlayable reports whether a track before i in the play order opens.
func (p *Player) anyPlayable(i int) bool {
	end := p.orderPos(i)
	if end < 0 {
		end = len(p.queue)
	}
	for k := range end {
		j := p.entryAt(k)
		if t, err := p.openTrack(p.trackAt(j), p.queue[j], p.rate); err == nil {
			t.close()
			return true
		}
	}
	return false
}
