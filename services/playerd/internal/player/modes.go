package player

import (
	"slices"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// The play modes. A queue plays under two orthogonal switches, as MPRIS
// (Shuffle, LoopStatus) and Home Assistant's media player (shuffle, repeat)
// have them:
//
//   - shuffle: the queue plays in a random order (order), every track once
//     per cycle; the order is saved with the queue, so a restart, a kill or
//     a resume continues it;
//   - repeat: off (stop after the last track), folder (the queue loops) or
//     track (the track loops, joined sample-exact).
//
// A folder's Mode, set by a parent per folder or carried by a folder
// command, chooses the switches when the folder starts. Two modes are start
// behaviours instead: single plays the next track of the folder at each
// start and stops at its end; random_one plays one random track, never the
// one played at the start before, and stops at its end. The switches can
// then be changed for the queue without changing the folder's mode.

// Mode is a folder's play mode.
type Mode string

const (
	ModeNormal    Mode = "normal"     // in order, stop at the end
	ModeRepeat    Mode = "repeat"     // the folder loops
	ModeRepeatOne Mode = "repeat_one" // the track loops
	ModeShuffle   Mode = "shuffle"    // every track once per cycle, in a random order
	ModeSingle    Mode = "single"     // each start plays the next track and stops at its end
	ModeRandomOne Mode = "random_one" // each start plays one random track and stops at its end
)

// Modes lists every mode, in the order a parent's page offers them.
var Modes = []Mode{ModeNormal, ModeRepeat, ModeRepeatOne, ModeShuffle, ModeSingle, ModeRandomOne}

// Valid reports whether m is one of Modes.
func (m Mode) Valid() bool {
	for _, x := range Modes {
		if m == x {
			return true
		}
	}
	return false
}

// The values of repeat.
const (
	RepeatOff    = "off"
	RepeatFolder = "folder"
	RepeatTrack  = "track"
)

// ValidRepeat reports whether r is a value of the repeat command.
func ValidRepeat(r string) bool {
	return r == RepeatOff || r == RepeatFolder || r == RepeatTrack
}

// switches are what a mode sets when its folder starts.
func (m Mode) switches() (shuffle bool, repeat string, stopAtEnd bool) {
	switch m {
	case ModeRepeat:
		return false, RepeatFolder, false
	case ModeRepeatOne:
		return false, RepeatTrack, false
	case ModeShuffle:
		return true, RepeatOff, false
	case ModeSingle, ModeRandomOne:
		return false, RepeatOff, true
	}
	return false, RepeatOff, false
}

// folderMode is the mode a parent set for folder id.
func (p *Player) folderMode(id string) Mode {
	if p.cfg.FolderMode == nil {
		return ModeNormal
	}
	if m := p.cfg.FolderMode(id); m.Valid() {
		return m
	}
	return ModeNormal
}

// setModes puts the queue just loaded under mode, with order the play order
// (nil: the folder's).
func (p *Player) setModes(mode Mode, order []int) {
	p.mode = mode
	p.shuffle, p.repeat, p.stopAtEnd = mode.switches()
	p.order = nil
	if p.shuffle {
		p.order = order
	}
	p.dirty = true
}

// restoreModes takes the modes of the saved queue, loaded just before. An
// order that no longer fits the folder (tracks came or went) is drawn anew.
func (p *Player) restoreModes(q *state.Queue) {
	p.mode = ModeNormal
	if m := Mode(q.Mode); m.Valid() {
		p.mode = m
	}
	p.shuffle, p.stopAtEnd = q.Shuffle, q.StopAtEnd
	p.repeat = RepeatOff
	if ValidRepeat(q.Repeat) {
		p.repeat = q.Repeat
	}
	p.order = nil
	if p.shuffle {
		p.order = q.Order
		if len(q.Order) != len(p.queue) || !isPermutation(q.Order) {
			p.order = p.newOrder(len(p.queue), -1, -1)
		}
	}
}

// saveModes writes the modes into the queue to be saved. The order is
// shared, not copied: p.order is only ever replaced, never changed in
// place, and the saver gets a deep copy (state.Saved.Clone).
func (p *Player) saveModes(q *state.Queue) {
	q.Mode, q.Shuffle, q.Repeat, q.StopAtEnd, q.Order = string(p.mode), p.shuffle, p.repeat, p.stopAtEnd, p.order
}

// newOrder draws a play order of n entries. It starts with first when that
// is >= 0; otherwise, when avoid >= 0, it does not start with avoid (a new
// cycle does not begin with the track that ended the last one).
func (p *Player) newOrder(n, first, avoid int) []int {
	o := p.rng.Perm(n)
	switch {
	case n < 2:
	case first >= 0 && first < n:
		k := slices.Index(o, first)
		o[0], o[k] = o[k], o[0]
	case avoid >= 0 && o[0] == avoid:
		k := 1 + p.rng.IntN(n-1)
		o[0], o[k] = o[k], o[0]
	}
	return o
}

// pickOther draws one of n entries, never last (when there is another).
func (p *Player) pickOther(n, last int) int {
	if n < 2 {
		return 0
	}
	if last < 0 || last >= n {
		return p.rng.IntN(n)
	}
	k := p.rng.IntN(n - 1)
	if k >= last {
		k++
	}
	return k
}

func isPermutation(o []int) bool {
	seen := make([]bool, len(o))
	for _, i := range o {
		if i < 0 || i >= len(o) || seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}

// orderPos is where queue entry i comes in the play order; -1 for none.
func (p *Player) orderPos(i int) int {
	if p.order == nil {
		if i < 0 || i >= len(p.queue) {
			return -1
		}
		return i
	}
	return slices.Index(p.order, i)
}

// entryAt is the queue entry at position k of the play order.
func (p *Player) entryAt(k int) int {
	if p.order == nil {
		return k
	}
	return p.order[k]
}

// first is the entry the queue starts with.
func (p *Player) first() int {
	if len(p.queue) == 0 {
		return 0
	}
	return p.entryAt(0)
}

// after is the entry that follows i in the play order, without wrapping.
func (p *Player) after(i int) (int, bool) {
	if k := p.orderPos(i); k+1 < len(p.queue) {
		return p.entryAt(k + 1), true
	}
	return -1, false
}

// before is the entry played before i in the play order.
func (p *Player) before(i int) (int, bool) {
	if k := p.orderPos(i); k > 0 {
		return p.entryAt(k - 1), true
	}
	return -1, false
}

// following is the entry to play once i is done (it ended, or next was
// asked for). At the end of the order a repeating folder starts again; a
// shuffled one draws the order of its next cycle. ok is false where the
// queue ends.
func (p *Player) following(i int) (int, bool) {
	if n, ok := p.after(i); ok {
		return n, true
	}
	if p.repeat != RepeatFolder || len(p.queue) == 0 {
		return -1, false
	}
	if p.shuffle {
		p.order = p.newOrder(len(p.queue), -1, i)
		p.dirty = true
	}
	return p.first(), true
}

// final reports whether the current track is the last of the play order,
// or of a start of single or random_one.
func (p *Player) final() bool {
	if p.cur == nil {
		return false
	}
	if p.stopAtEnd {
		return true
	}
	_, ok := p.after(p.index)
	return !ok
}

// canNext reports whether a next command moves to another track: one
// follows in the play order (a start of single plays one, but next still
// moves on), or the folder repeats. At the end of a shuffled cycle without
// repeat, next ends the queue, as in folder order.
func (p *Player) canNext() bool {
	if len(p.queue) == 0 {
		return false
	}
	_, ok := p.after(p.index)
	return ok || p.repeat == RepeatFolder
}

// upcoming is the entry that will follow the current one by itself, for
// the prefetch; it draws nothing, so a shuffled folder's next cycle is not
// prefetched (it opens when it starts, as a folder's first track does).
func (p *Player) upcoming() (int, bool) {
	if p.stopAtEnd || p.repeat == RepeatTrack {
		return -1, false
	}
	if n, ok := p.after(p.index); ok {
		return n, true
	}
	if p.repeat == RepeatFolder && !p.shuffle && len(p.queue) > 0 {
		return p.first(), true
	}
	return -1, false
}

// loopTrack starts the current track again on the sample after its end
// (repeat track), as a gapless change to the next track would. A station
// or a track that streamed nothing does not loop.
func (p *Player) loopTrack() bool {
	if p.cur == nil || p.cur.remote != nil || p.cur.base+p.cur.frames == 0 || p.cur.dec.Err() != nil {
		return false
	}
	if err := p.cur.seekFrame(0); err != nil {
		p.cfg.OnSkip(p.trackAt(p.index), err)
		return false
	}
	p.jumps++
	return true
}

// setShuffle switches shuffle for the queue. The track playing stays and
// begins the new order, so every other track follows once.
func (p *Player) setShuffle(on bool) {
	if on == p.shuffle {
		return
	}
	p.shuffle = on
	p.order = nil
	if on {
		p.order = p.newOrder(len(p.queue), p.index, -1)
	}
	p.dropPrefetch()
	p.dirty = true
}

func (p *Player) setRepeat(r string) {
	if r == p.repeat {
		return
	}
	p.repeat = r
	p.dropPrefetch()
	p.dirty = true
}

// seekDelta moves the position by delta seconds, clamped to the track.
func (p *Player) seekDelta(delta float64) error {
	if p.cur == nil || p.intent() == Stopped {
		return conflict("player is not active")
	}
	if p.cur.live() {
		return conflict("a radio station cannot seek")
	}
	to := max(0, p.cur.seconds()+delta)
	if p.cur.duration > 0 {
		to = min(to, p.cur.duration)
	}
	return p.seek(to)
}

// endOfStart ends a start of single or random_one, the track heard to its
// end. single goes on to the next track, which the next start plays;
// random_one stays on the track, which the next start avoids. Either is
// written down as the folder's resume point, since the next start may come
// after another folder or a restart.
func (p *Player) endOfStart() {
	i := p.index
	if p.mode == ModeSingle {
		if n, ok := p.after(i); ok {
			i = n
		} else {
			i = p.first()
		}
	}
	if p.openAt(i, 0) != nil {
		p.closeTrack()
		return
	}
	if p.folder == nil || p.cur == nil {
		return
	}
	if p.saved.Resume == nil {
		p.saved.Resume = map[string]state.ResumePoint{}
	}
	p.saved.Resume[p.folder.ID] = state.ResumePoint{
		Index: p.index, TrackID: p.cur.item.ID, UpdatedAt: resumeStamp(time.Now(), p.saved.Resume),
		Mode: string(p.mode), Order: p.order,
	}
}

// startIndex is where a folder command starts f under mode, and at what
// position: single goes on where the last start ended, random_one draws a
// track other than the last start's, shuffle begins its order; the others
// start at the first track. last is the folder's resume point, if valid.
func (p *Player) startIndex(f library.Folder, mode Mode, order []int, last *state.ResumePoint) (int, float64) {
	switch mode {
	case ModeSingle:
		if last != nil {
			return last.Index, last.Position
		}
	case ModeRandomOne:
		prev := -1
		if p.folder != nil && p.folder.ID == f.ID && p.index >= 0 {
			prev = p.index
		} else if last != nil {
			prev = last.Index
		}
		return p.pickOther(len(f.Tracks), prev), 0
	case ModeShuffle:
		return order[0], 0
	}
	return 0, 0
}
