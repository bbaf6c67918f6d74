package hav1

import (
	"context"
	"reflect"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// BusFeed is the event stream's view of the box's change feed: the
// playback as it is, then playback_changed whenever a player event changes
// what the contract's playback object shows. The sequence is the feed's
// event id. A subscriber that falls behind the feed or its own 16 messages
// is dropped (the channel closes), never waited for.
type BusFeed struct {
	Bus    *events.Bus
	Player interface{ Status() player.Status }
}

// playerKinds are the events that can change the playback object.
var playerKinds = map[events.Kind]bool{
	events.KindState: true, events.KindQueue: true, events.KindTrack: true,
	events.KindVolume: true, events.KindSeek: true, events.KindNowPlaying: true,
	events.KindModes: true,
}

// Subscribe implements Feed.
func (f BusFeed) Subscribe(ctx context.Context) <-chan Event {
	out := make(chan Event, 16)
	sub := f.Bus.Subscribe()
	go func() {
		defer close(out)
		defer sub.Close()
		var last Playback
		send := func(seq uint64) bool {
			pb := PlaybackOf(f.Player.Status())
			if seq != sub.From() && reflect.DeepEqual(pb, last) {
				return true
			}
			last = pb
			select {
			case out <- Event{Event: "playback_changed", Sequence: seq, Data: pb}:
				return true
			default:
				return false
			}
		}
		if !send(sub.From()) {
			return
		}
		for {
			ready := sub.Ready()
			ev, err := sub.Next()
			switch {
			case err != nil:
				return
			case ev != nil:
				if playerKinds[ev.Kind] && !send(ev.ID) {
					return
				}
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-ready:
			}
		}
	}()
	return out
}
