package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

// playerView is what the soak compares of the player: what a command's
// answer, a poll of /api/status or the event feed tells.
type playerView struct {
	t         time.Time // when it was seen
	src       string
	volume    int
	maxVolume int
	folder    string // "" when nothing is loaded
	index     int
	position  float64
	state     string
}

// statusBody is the part of the status the soak reads.
type statusBody struct {
	State     string  `json:"state"`
	FolderID  *string `json:"folder_id"`
	Index     int     `json:"index"`
	Position  float64 `json:"position"`
	Volume    int     `json:"volume"`
	MaxVolume int     `json:"max_volume"`
}

func viewOf(src string, at time.Time, body []byte) (playerView, bool) {
	var st statusBody
	if json.Unmarshal(body, &st) != nil || st.State == "" {
		return playerView{}, false
	}
	v := playerView{t: at, src: src, volume: st.Volume, maxVolume: st.MaxVolume, index: st.Index, position: st.Position, state: st.State}
	if st.FolderID != nil {
		v.folder = *st.FolderID
	}
	return v, true
}

// pendingChange is a change a client has asked for and not yet heard the
// answer to: it may have happened, unseen, when a kill comes.
type pendingChange struct {
	who    string
	action string // a command's action, "card", "set_volume"
	value  int    // volume, volume_delta
	folder string // folder, resume, card
}

// views are the player's states seen in the current life, and the changes
// in flight. The check after a kill asks them what the disk may hold.
type views struct {
	mu      sync.Mutex
	life    int
	seen    []playerView // the last minute's
	pending map[string]pendingChange
	kinds   map[string]string // folder id -> kind (local, radio, podcast)
}

func newViews() *views {
	return &views{pending: map[string]pendingChange{}, kinds: map[string]string{}}
}

func (v *views) add(life int, pv playerView) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if life != v.life {
		return // an answer from before the kill, arriving late
	}
	v.seen = append(v.seen, pv)
	if len(v.seen) > 4096 {
		cut := 0
		for cut < len(v.seen) && v.seen[cut].t.Before(pv.t.Add(-time.Minute)) {
			cut++
		}
		v.seen = append([]playerView(nil), v.seen[cut:]...)
	}
}

func (v *views) setPending(who string, c *pendingChange) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c == nil {
		delete(v.pending, who)
		return
	}
	c.who = who
	v.pending[who] = *c
}

func (v *views) setKinds(k map[string]string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.kinds = k
}

// newLife starts the views of the next life.
func (v *views) newLife(life int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.life, v.seen = life, nil
	clear(v.pending)
}

// durableAfter: a change older than this at a kill must be on disk (the
// player's state is written within 1 s of a change, docs/api.md).
const durableAfter = time.Second

// slack covers the time between the box making a state and the soak
// seeing it.
const slack = 200 * time.Millisecond

// explainDisk returns "" when disk can be the box's state at some moment
// of the last second before the kill at killAt, else why not; held tells
// whether a state seen over a second before the kill held it to anything.
func (v *views) explainDisk(disk state.Saved, killAt time.Time) (why string, held bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := -1
	for i, o := range v.seen {
		if o.t.Before(killAt.Add(-durableAfter)) {
			k = i
		}
	}
	if k < 0 {
		return "", false // nothing seen over a second before the kill
	}
	from := v.seen[k].t.Add(-slack)
	var cands []playerView
	for i := k; i >= 0 && !v.seen[i].t.Before(from); i-- {
		cands = append(cands, v.seen[i])
	}
	cands = append(cands, v.seen[k+1:]...)
	for _, c := range cands {
		if v.matches(disk, c, killAt.Sub(c.t)) == "" {
			return "", true
		}
	}
	if len(v.pending) > 0 && v.explainedByPending(disk, cands) {
		return "", true
	}
	var whys []string
	for _, c := range cands[:min(len(cands), 4)] {
		whys = append(whys, fmt.Sprintf("not %s at -%v (%s)", c.src, killAt.Sub(c.t).Round(time.Millisecond), v.matches(disk, c, killAt.Sub(c.t))))
	}
	q := "none"
	if disk.Queue != nil {
		q = fmt.Sprintf("%s/%d at %.1f", short(disk.Queue.FolderID), disk.Queue.Index, disk.Queue.Position)
	}
	return fmt.Sprintf("disk volume %d, queue %s; %d states seen in the last second, %d changes in flight: %s",
		disk.Volume, q, len(cands), len(v.pending), strings.Join(whys, "; ")), true
}

// matches tells how disk differs from view c, seen age before the kill.
func (v *views) matches(disk state.Saved, c playerView, age time.Duration) string {
	if disk.Volume != c.volume {
		return fmt.Sprintf("volume %d", c.volume)
	}
	q := disk.Queue
	if c.folder == "" || c.index < 0 {
		if q != nil {
			return "no queue"
		}
		return ""
	}
	if q == nil || q.FolderID != c.folder || q.Index != c.index {
		return fmt.Sprintf("queue %s/%d", short(c.folder), c.index)
	}
	if v.kinds[c.folder] == "radio" {
		return "" // a station's queue is saved without a position
	}
	lo, hi := c.position-0.05, c.position+0.05
	if c.state == "playing" || c.state == "buffering" {
		// Playing, the position is written every 8 s, and moves on.
		lo, hi = c.position-10.5, c.position+age.Seconds()+0.5
	}
	if q.Position < lo || q.Position > hi {
		return fmt.Sprintf("position %.2f..%.2f (%s)", lo, hi, c.state)
	}
	return ""
}

// explainedByPending: the disk differs from every state seen only in what
// the changes in flight (answers a kill cut off) or the player on its own
// (a track ending) may have done.
func (v *views) explainedByPending(disk state.Saved, cands []playerView) bool {
	volumes := map[int]bool{}
	type place struct {
		folder string
		index  int // -1: any
	}
	places := map[place]bool{}
	for _, c := range cands {
		volumes[c.volume] = true
		places[place{c.folder, c.index}] = true
		if c.folder != "" {
			places[place{c.folder, c.index + 1}] = true // the next track, or the end
		}
		for _, p := range v.pending {
			switch p.action {
			case "volume", "set_volume":
				volumes[min(p.value, c.maxVolume)] = true
			case "volume_delta":
				volumes[max(0, min(c.volume+p.value, c.maxVolume))] = true
			case "next", "previous":
				places[place{c.folder, c.index + 1}] = true
				places[place{c.folder, max(c.index-1, 0)}] = true
			}
		}
	}
	for _, p := range v.pending {
		switch p.action {
		case "folder", "resume", "card":
			places[place{p.folder, -1}] = true
		case "unload": // a folder deleted or renamed while loaded
			places[place{"", -1}] = true
		}
	}
	if !volumes[disk.Volume] {
		return false
	}
	if disk.Queue == nil {
		return places[place{"", -1}]
	}
	return places[place{disk.Queue.FolderID, disk.Queue.Index}] || places[place{disk.Queue.FolderID, -1}]
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// restoredAs checks that a box just started is in the state on disk:
// paused where it was, never louder than its start volume (or bedtime's
// night maximum).
func restoredAs(disk state.Saved, st statusBody, startVolume, nightMax int, kind string) string {
	want := disk.Volume
	if want == 0 {
		want = startVolume // never a silent start
	}
	want = min(want, startVolume)
	if nightMax > 0 {
		want = min(want, nightMax)
	}
	var why []string
	if st.Volume != want {
		why = append(why, fmt.Sprintf("volume %d, want %d (disk %d, start volume %d, night max %d)", st.Volume, want, disk.Volume, startVolume, nightMax))
	}
	if q := disk.Queue; q == nil {
		if st.FolderID != nil {
			why = append(why, fmt.Sprintf("folder %s loaded, the disk has none", short(*st.FolderID)))
		}
	} else {
		switch {
		case st.FolderID == nil || *st.FolderID != q.FolderID || st.Index != q.Index:
			f := "none"
			if st.FolderID != nil {
				f = short(*st.FolderID)
			}
			why = append(why, fmt.Sprintf("at %s/%d (%s, %.2f s), the disk has %s/%d at %.2f s (a %s folder)", f, st.Index, st.State, st.Position, short(q.FolderID), q.Index, q.Position, kind))
		case kind != "radio" && math.Abs(st.Position-q.Position) > 0.1:
			why = append(why, fmt.Sprintf("position %.2f, the disk has %.2f", st.Position, q.Position))
		case kind != "radio" && st.State != "paused":
			why = append(why, fmt.Sprintf("state %s, want paused", st.State))
		}
	}
	return strings.Join(why, "; ")
}

// kindOf is the kind of the folder loaded in disk's queue.
func (v *views) kindOf(disk state.Saved) string {
	if disk.Queue == nil {
		return ""
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.kinds[disk.Queue.FolderID]
}
