package api

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/netlimit"
)

// StreamLimits bound GET /api/events. Zero values mean the defaults.
//
// A stream holds its connection for as long as the client listens, and
// the server's connection limit (netlimit: 48 per address, 256 in all)
// never reclaims a connection in the middle of a response. So streams get
// a share of their own well below those: a client with its streams open
// still has most of its connections for requests, and streams alone cannot
// fill the box's connections.
type StreamLimits struct {
	Total     int // streams open at once (default 32)
	PerClient int // streams of one client address (default 4)
	// Heartbeat is the comment line sent after this long without an
	// event, so that proxies, phones and NAT keep the connection, and a
	// client that went away is noticed (default 15 s).
	Heartbeat time.Duration
	// WriteTimeout: a write to the client that takes longer ends the
	// stream (default 10 s). It replaces the server's WriteTimeout, which
	// would end every stream after 30 s.
	WriteTimeout time.Duration
	// SendBuffer is the socket send buffer of a stream's connection
	// (default 32 KiB; Linux doubles it). A stalled client then holds
	// little kernel memory, and its stream blocks, falls behind the feed
	// and is dropped after a few kilobytes instead of megabytes.
	SendBuffer int
}

func (l StreamLimits) withDefaults() StreamLimits {
	if l.Total <= 0 {
		l.Total = 32
	}
	if l.PerClient <= 0 {
		l.PerClient = 4
	}
	if l.Heartbeat <= 0 {
		l.Heartbeat = 15 * time.Second
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = 10 * time.Second
	}
	if l.SendBuffer <= 0 {
		l.SendBuffer = 32 << 10
	}
	return l
}

// retryMS is the reconnection delay a stream asks EventSource clients for.
const retryMS = 2000

// streamCounter counts open streams in total and per client address.
type streamCounter struct {
	mu    sync.Mutex
	total int
	per   map[netip.Addr]int
}

var (
	errStreamsFull   = fault.Retry(fault.Unavailable, 10*time.Second, "too many event streams open; try again later")
	errClientStreams = fault.Retry(fault.Unavailable, 10*time.Second, "too many event streams from this address; close one first")
)

func (c *streamCounter) acquire(addr netip.Addr, l StreamLimits) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.total >= l.Total:
		return nil, errStreamsFull
	case c.per[addr] >= l.PerClient:
		return nil, errClientStreams
	}
	if c.per == nil {
		c.per = make(map[netip.Addr]int)
	}
	c.total++
	c.per[addr]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.total--
		if c.per[addr]--; c.per[addr] == 0 {
			delete(c.per, addr)
		}
	}, nil
}

// eventStream is GET /api/events: server-sent events. A new stream starts
// with the full status; one that resumes (Last-Event-ID) gets the events it
// missed, or, when the box no longer has them all, a reset followed by the
// full status. Then every event as it is published, and a heartbeat
// comment when nothing happened for a while. A client that does not keep
// up is dropped; EventSource reconnects by itself and is told to reset.
func (h *handler) eventStream(w http.ResponseWriter, r *http.Request) {
	// A read, but one that holds a place for as long as it runs: a page of
	// another web site could not read it (no CORS), so it gets no place.
	if msg := crossSite(r); msg != "" {
		h.fail(w, r, fault.New(fault.Forbidden, "%s", msg))
		return
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		return
	}
	lim := h.Streams.withDefaults()
	release, err := h.streams.acquire(auth.CallerFrom(r.Context()).Addr, lim)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer release()

	var sub *events.Subscription
	start := true // begin with the status
	reset := false
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		after, perr := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		ok := false
		if perr == nil {
			sub, ok = h.Events.Resume(after)
		} else {
			sub = h.Events.Subscribe()
		}
		start, reset = !ok, !ok
	} else {
		sub = h.Events.Subscribe()
	}
	defer sub.Close()

	// The server's WriteTimeout would fail the writes once it passes (its
	// ReadTimeout ends with the request's headers, net/http's reader
	// clears it): each write gets a deadline of its own instead.
	s := &sse{w: w, rc: http.NewResponseController(w), timeout: lim.WriteTimeout}
	setSendBuffer(r, lim.SendBuffer)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("X-Accel-Buffering", "no") // proxies: do not hold events back
	// The connection ends with the stream rather than being reused with
	// the stream's small send buffer.
	hd.Set("Connection", "close")
	s.deadline()
	w.WriteHeader(http.StatusOK)
	s.printf("retry: %d\n\n", retryMS)
	if reset {
		s.event(0, events.KindReset, []byte("{}"))
	}
	if start {
		data, err := json.Marshal(statusEvent{h.statusBody(h.Player.Status()), time.Now()})
		if err != nil {
			return // a status that cannot be encoded; /api/status would fail too
		}
		s.event(sub.From(), events.KindStatus, data)
	}
	if s.flush() != nil {
		return
	}

	heartbeat := time.NewTimer(lim.Heartbeat)
	defer heartbeat.Stop()
	for {
		ready := sub.Ready()
		sent := false
		for {
			ev, err := sub.Next()
			if err != nil {
				return // dropped (too slow) or the box is shutting down
			}
			if ev == nil {
				break
			}
			if !sent {
				s.deadline()
				sent = true
			}
			s.event(ev.ID, ev.Kind, ev.Data)
		}
		if sent {
			if s.flush() != nil {
				return
			}
			heartbeat.Reset(lim.Heartbeat)
		}
		select {
		case <-ready:
		case <-heartbeat.C:
			s.deadline()
			s.printf(":\n\n")
			if s.flush() != nil {
				return
			}
			heartbeat.Reset(lim.Heartbeat)
		case <-r.Context().Done():
			return
		}
	}
}

// statusEvent is the first event: the body of GET /api/status and when
// its position was read.
type statusEvent struct {
	statusBody
	At time.Time `json:"at"`
}

// MarshalJSON adds "at" to the status body's own encoding.
func (e statusEvent) MarshalJSON() ([]byte, error) {
	return withField(e.statusBody, "at", e.At)
}

// sse writes the event-stream format. A write error is kept and ends the
// stream at the next flush.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	err     error
	buf     []byte
}

func (s *sse) deadline() { _ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout)) }

func (s *sse) write(b []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}

func (s *sse) printf(format string, a ...any) {
	s.buf = fmt.Appendf(s.buf[:0], format, a...)
	s.write(s.buf)
}

// event writes one event; id 0 leaves the client's last event id as it is.
// Data is one line of JSON (encoding/json writes no newlines).
func (s *sse) event(id uint64, kind events.Kind, data []byte) {
	b := s.buf[:0]
	if id != 0 {
		b = append(b, "id: "...)
		b = strconv.AppendUint(b, id, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, kind...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	s.buf = b
	s.write(b)
}

func (s *sse) flush() error {
	if s.err != nil {
		return s.err
	}
	s.err = s.rc.Flush()
	return s.err
}

// setSendBuffer sets the socket send buffer of an HTTP/1 request's
// connection (an HTTP/2 connection carries other requests too), looking
// through wrappers (netlimit, TLS) that expose NetConn.
func setSendBuffer(r *http.Request, n int) {
	if r.ProtoMajor != 1 {
		return
	}
	c := netlimit.Conn(r.Context())
	for c != nil {
		switch t := c.(type) {
		case interface{ SetWriteBuffer(int) error }:
			_ = t.SetWriteBuffer(n)
			return
		case interface{ NetConn() net.Conn }:
			c = t.NetConn()
		default:
			return
		}
	}
}
