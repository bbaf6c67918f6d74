// Package playerfeed publishes the player's changes to the event feed. It
// runs in a goroutine of its own beside the player and reads the player's
// snapshots (Status, woken by Changed), so the player's goroutine never waits
// for the feed: not for a lock, not for JSON, not for a reader.
//
// A snapshot describes the state, so changes closer together than the feed
// wakes up arrive as one event with the newest values; the position is not
// an event of its own (it moves every second while playing): the events
// that carry it also carry when it was read ("at"), and clients extrapolate.
package playerfeed

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Source is the player's side: its snapshots and their change signal.
type Source interface {
	Status() player.Status
	// Changed returns a channel closed at the next change.
	Changed() <-chan struct{}
}

// Publisher is the feed's side (*events.Bus).
type Publisher interface {
	Publish(k events.Kind, payload any) error
}

// Payloads, one per kind; docs/api.md describes them for clients.
type (
	// State is events.KindState: playing, paused, stopped or error.
	State struct {
		State    player.State `json:"state"`
		Error    string       `json:"error,omitempty"`
		Position float64      `json:"position"`
		At       time.Time    `json:"at"`
	}
	// Queue is events.KindQueue: the player holds another queue.
	Queue struct {
		FolderID *string            `json:"folder_id"`
		Folder   *string            `json:"folder"`
		Cover    *string            `json:"cover"`
		Queue    []player.QueueItem `json:"queue"`
	}
	// Track is events.KindTrack: another entry of the queue is current
	// (Item is null when none is).
	Track struct {
		Index    int               `json:"index"`
		Item     *player.QueueItem `json:"item"`
		Position float64           `json:"position"`
		Duration float64           `json:"duration"`
		At       time.Time         `json:"at"`
	}
	// Volume is events.KindVolume.
	Volume struct {
		Volume    int `json:"volume"`
		MaxVolume int `json:"max_volume"`
	}
	// Seek is events.KindSeek: the position jumped within the track.
	Seek struct {
		Position float64   `json:"position"`
		At       time.Time `json:"at"`
	}
	// NowPlaying is events.KindNowPlaying.
	NowPlaying struct {
		NowPlaying *string `json:"now_playing"`
	}
	// Output is events.KindOutput: the headphones were plugged in or
	// unplugged (player.OutputSpeaker, player.OutputHeadphones).
	Output struct {
		Output string `json:"output"`
	}
	// Speech is events.KindSpeech.
	Speech struct {
		Speaking bool `json:"speaking"`
	}
	// Waiting is events.KindWaiting: the folder calm mode holds back.
	Waiting struct {
		Waiting *player.Waiting `json:"waiting"`
	}
	// Modes is events.KindModes: the queue's play switches and the mode
	// its folder started in.
	Modes struct {
		Shuffle bool        `json:"shuffle"`
		Repeat  string      `json:"repeat"`
		Mode    player.Mode `json:"mode,omitempty"`
	}
)

// Change is one event to publish.
type Change struct {
	Kind    events.Kind
	Payload any
}

// Changes returns the events that take a client that knows prev to cur, in
// the order a client should apply them: the queue before its track, the
// track before the state.
func Changes(prev, cur player.Status, at time.Time) []Change {
	var out []Change
	pos := finite(cur.Position)
	queue := str(prev.FolderID) != str(cur.FolderID) || !slices.Equal(prev.Queue, cur.Queue)
	if queue || str(prev.Folder) != str(cur.Folder) || str(prev.Cover) != str(cur.Cover) {
		out = append(out, Change{events.KindQueue, Queue{cur.FolderID, cur.Folder, cur.Cover, orEmpty(cur.Queue)}})
	}
	track := queue || prev.Index != cur.Index || prev.Duration != cur.Duration
	if track {
		t := Track{Index: cur.Index, Position: pos, Duration: finite(cur.Duration), At: at}
		if cur.Index >= 0 && cur.Index < len(cur.Queue) {
			item := cur.Queue[cur.Index]
			t.Item = &item
		}
		out = append(out, Change{events.KindTrack, t})
	} else if prev.Jumps != cur.Jumps {
		out = append(out, Change{events.KindSeek, Seek{Position: pos, At: at}})
	}
	if prev.Output != cur.Output {
		out = append(out, Change{events.KindOutput, Output{cur.Output}})
	}
	if prev.State != cur.State || prev.Error != cur.Error {
		out = append(out, Change{events.KindState, State{State: cur.State, Error: cur.Error, Position: pos, At: at}})
	}
	if prev.Volume != cur.Volume || prev.MaxVolume != cur.MaxVolume {
		out = append(out, Change{events.KindVolume, Volume{cur.Volume, cur.MaxVolume}})
	}
	if str(prev.NowPlaying) != str(cur.NowPlaying) {
		out = append(out, Change{events.KindNowPlaying, NowPlaying{cur.NowPlaying}})
	}
	if prev.Speaking != cur.Speaking {
		out = append(out, Change{events.KindSpeech, Speech{cur.Speaking}})
	}
	if (prev.Waiting == nil) != (cur.Waiting == nil) || prev.Waiting != nil && *prev.Waiting != *cur.Waiting {
		out = append(out, Change{events.KindWaiting, Waiting{cur.Waiting}})
	}
	if prev.Shuffle != cur.Shuffle || prev.Repeat != cur.Repeat || prev.Mode != cur.Mode {
		out = append(out, Change{events.KindModes, Modes{cur.Shuffle, cur.Repeat, cur.Mode}})
	}
	return out
}

// Feed publishes one player's changes.
type Feed struct {
	src     Source
	pub     Publisher
	now     func() time.Time
	onError func(error)
	changed <-chan struct{}
	prev    player.Status
}

// New takes the player's state now: Run publishes every change after New
// returns, and not that state itself (a client begins with the status).
// A payload the Publisher refuses (a bug) goes to onError (may be nil).
// now stamps the positions; nil means time.Now.
func New(src Source, pub Publisher, now func() time.Time, onError func(error)) *Feed {
	if now == nil {
		now = time.Now
	}
	if onError == nil {
		onError = func(error) {}
	}
	// The channel before the snapshot: a change after the snapshot closes
	// it, so none is missed.
	changed := src.Changed()
	return &Feed{src: src, pub: pub, now: now, onError: onError, changed: changed, prev: src.Status()}
}

// Run publishes until ctx ends.
func (f *Feed) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.changed:
		}
		f.changed = f.src.Changed()
		cur := f.src.Status()
		for _, c := range Changes(f.prev, cur, f.now()) {
			if err := f.pub.Publish(c.Kind, c.Payload); err != nil {
				f.onError(err)
			}
		}
		f.prev = cur
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func orEmpty(q []player.QueueItem) []player.QueueItem {
	if q == nil {
		return []player.QueueItem{}
	}
	return q
}

// finite keeps a broken duration from making the event unencodable.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
