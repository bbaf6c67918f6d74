package hav1

import (
	"context"
	"net/http"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/storybox/storybox/services/internal/fault"
)

// Event is one message of the event stream, in the contract's shape.
type Event struct {
	Event    string `json:"event"`
	Sequence uint64 `json:"sequence"`
	Data     any    `json:"data"`
}

// Feed is what the event stream needs of the box's event feed: the
// playback as it is, then the events from now on, until ctx ends. The
// channel is closed when ctx ends or the feed drops a subscriber that fell
// behind; the client then re-reads /state, as the contract tells it to.
// playerd adapts the box's one event feed (package events) to it.
type Feed interface {
	Subscribe(ctx context.Context) <-chan Event
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
