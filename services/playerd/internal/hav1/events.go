package hav1

import (
	"context"
	"net/http"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Event is one message of the event stream, in the contract's shape.
type Event struct {
	Event    string `json:"event"`
	Sequence uint64 `json:"sequence"`
	Data     any    `json:"data"`
}

// Feed is what the event stream needs of the box's event feed: the events
// from now on, until ctx ends. The channel is closed when ctx ends or the
// feed drops a subscriber that fell behind; the client then re-reads
// /state, as the contract tells it to. The box's shared event broadcaster
// satisfies this with an adapter; until it exists, PlayerFeed does.
type Feed interface {
	Subscribe(ctx context.Context) <-chan Event
}

// Changer is the player's change signal and status.
type Changer interface {
	Status() player.Status
	Changed() <-chan struct{}
}

// PlayerFeed turns the player's changes into playback_changed events, one
// per change of what the contract's playback object shows (state, track,
// volume, whole seconds of position).
type PlayerFeed struct {
	P   Changer
	seq atomic.Uint64
}

// Subscribe implements Feed.
func (f *PlayerFeed) Subscribe(ctx context.Context) <-chan Event {
	out := make(chan Event, 16)
	go func() {
		defer close(out)
		var last *Playback
		for {
			changed := f.P.Changed()
			pb := PlaybackOf(f.P.Status())
			if pb.Position != nil {
				pos := float64(int(*pb.Position))
				pb.Position = &pos
			}
			if last == nil || !reflect.DeepEqual(*last, pb) {
				ev := Event{Event: "playback_changed", Sequence: f.seq.Add(1), Data: pb}
				select {
				case out <- ev:
				default:
					return // the subscriber fell behind: drop it, never wait
				}
				last = &pb
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
		}
	}()
	return out
}

// heartbeat is how often an idle stream is pinged, so dead peers are found
// and middleboxes keep the connection.
const heartbeat = 30 * time.Second

// events is GET /events, a WebSocket of Event messages (scope read). It
// sends; what the client sends is read only for close and pings.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	if h.Events == nil {
		h.fail(w, r, fault.New(fault.NotFound, "this box has no event stream; poll /state"))
		return
	}
	select {
	case h.streams <- struct{}{}:
		defer func() { <-h.streams }()
	default:
		h.fail(w, r, fault.Retry(fault.Busy, 10*time.Second, "too many event streams open"))
		return
	}
	// The server's read and write timeouts are for requests; a stream
	// lives on.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	c, err := websocket.Accept(w, r, nil) // nil: same-origin browsers only; clients without Origin pass
	if err != nil {
		return // Accept has answered
	}
	defer c.CloseNow()
	c.SetReadLimit(4 << 10)
	ctx := c.CloseRead(r.Context())
	evs := h.Events.Subscribe(ctx)
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-evs:
			if !ok {
				c.Close(websocket.StatusTryAgainLater, "fell behind; re-read /state and reconnect")
				return
			}
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := wsjson.Write(wctx, c, ev)
			cancel()
			if err != nil {
				return
			}
		case <-tick.C:
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := c.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		}
	}
}
