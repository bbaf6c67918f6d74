// Package netlimit bounds the connections a server holds open, in total and
// per client address, so that one client cannot take the memory of a small
// box or crowd out the others, and it does so without ever cutting a
// request short. It wraps any net.Listener; an http.Server reports through
// ConnState which connections sit idle between requests, and only those
// are given up under pressure.
//
// The wrapper accepts every connection the kernel queued, at once, so that
// it sees each one's address: a greedy client's connections never wait in
// the accept queue ahead of another client's. Then:
//
//   - A client at its share (PerClient) that opens another connection gives
//     up its own keep-alive connection that has been idle longest.
//   - When Total connections are open, a new client's connection takes the
//     longest-idle connection of the client holding the most (if that
//     client holds at least two more than the newcomer).
//   - With nothing idle to give up, the new connection is still served, but
//     only to be refused: its request is answered 503 with Retry-After
//     (Refusal tells the handler so) and the connection is closed. At most
//     Refusing connections are in that state at once; beyond that (a
//     flood) a connection is closed unanswered.
//
// A new connection is never given up, as its request is on its way, nor
// one in a request. A connection given up or refused is closed gracefully:
// its sending side first, then what the client still sends is read and
// dropped for a moment, then it is closed. The client reads the 503, or the
// clean end of an idle keep-alive connection (which HTTP clients expect and
// retry), instead of a reset.
package netlimit

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Config bounds the connections of a Listener.
type Config struct {
	// Total caps the connections open at once.
	Total int
	// PerClient caps the connections of one client address.
	PerClient int
	// Refusing caps the connections over a limit that are being answered
	// 503 at once; zero: as many as Total. A refused connection costs
	// what a served one does, for the moment it takes.
	Refusing int
	// RetryAfter is what a refused client is told; zero: 1 s.
	RetryAfter time.Duration
}

// Stats counts what a Listener did.
type Stats struct {
	Open    int // connections open now, refused ones not included
	Peak    int // most connections open at once
	Clients int // addresses with open connections
	// Refused: connections over a limit, answered 503.
	Refused uint64
	// Dropped: connections closed unanswered as soon as they were
	// accepted, with Refusing connections being refused already.
	Dropped uint64
	// Reclaimed: idle keep-alive connections closed to make room.
	Reclaimed uint64
}

const (
	// drainFor and drainMax bound how long and how much a connection
	// given up or refused is read after its answer, so that the client's
	// last bytes are not met with a reset.
	drainFor = time.Second
	drainMax = 256 << 10
)

// Listener is a net.Listener that keeps to a Config.
type Listener struct {
	net.Listener
	cfg Config
	// The refusals a refused connection's handler is given.
	fromClient, fromAll error

	mu       sync.Mutex
	clients  map[netip.Addr][]*conn
	refusing int    // refused connections not closed yet
	draining int    // connections being drained before their close
	clock    uint64 // orders idle times: smaller is idle longer
	stats    Stats
}

// Wrap bounds the connections accepted from inner. For an http.Server, set
// its ConnState to ConnState (or the Listener's), or idle connections
// cannot be told apart and only refusing new ones remains; set its
// ConnContext to ConnContext and answer a request with Refusal(ctx) != nil
// with that error (503) and Connection: close.
func Wrap(inner net.Listener, cfg Config) *Listener {
	if cfg.Total < 1 {
		cfg.Total = 1
	}
	if cfg.PerClient < 1 || cfg.PerClient > cfg.Total {
		cfg.PerClient = cfg.Total
	}
	if cfg.Refusing < 1 {
		cfg.Refusing = cfg.Total
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Second
	}
	return &Listener{
		Listener:   inner,
		cfg:        cfg,
		clients:    make(map[netip.Addr][]*conn),
		fromClient: fault.Retry(fault.Unavailable, cfg.RetryAfter, "too many connections from this address; try again later"),
		fromAll:    fault.Retry(fault.Unavailable, cfg.RetryAfter, "too many connections; try again later"),
	}
}

// Accept returns the next connection, within the limits or to be refused;
// connections beyond even that are closed here and never reach the server.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		admitted, victim := l.admit(c)
		if victim != nil {
			victim.giveUp()
		}
		if admitted != nil {
			return admitted, nil
		}
		c.Close()
	}
}

// admit decides under the lock; closing happens outside it.
func (l *Listener) admit(c net.Conn) (admitted, victim *conn) {
	addr := clientAddr(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	mine := l.clients[addr]
	var refusal error
	switch {
	case len(mine) >= l.cfg.PerClient:
		if victim = l.takeIdle(mine); victim == nil {
			refusal = l.fromClient
		}
	case l.stats.Open >= l.cfg.Total:
		if victim = l.greediestIdle(len(mine) + 2); victim == nil {
			refusal = l.fromAll
		}
	}
	if refusal != nil {
		if l.refusing >= l.cfg.Refusing {
			l.stats.Dropped++
			return nil, nil
		}
		l.refusing++
		l.stats.Refused++
		return &conn{Conn: c, l: l, addr: addr, refusal: refusal}, nil
	}
	if victim != nil {
		l.forget(victim)
		l.stats.Reclaimed++
	}
	admitted = &conn{Conn: c, l: l, addr: addr} // busy: its request is on its way
	l.clients[addr] = append(l.clients[addr], admitted)
	l.stats.Open++
	l.stats.Peak = max(l.stats.Peak, l.stats.Open)
	return admitted, victim
}

// takeIdle marks the longest-idle connection of cs as given up and returns
// it; nil when none is idle. A connection whose next request has reached
// the socket is busy, not idle.
func (l *Listener) takeIdle(cs []*conn) *conn {
	for {
		c := longestIdle(cs)
		if c == nil {
			return nil
		}
		if c.pending() {
			c.state.CompareAndSwap(stateIdle, stateBusy)
			continue
		}
		if c.state.CompareAndSwap(stateIdle, stateGivenUp) {
			return c
		}
		// It turned busy meanwhile: the next one.
	}
}

// greediestIdle gives up the longest-idle connection of the client holding
// the most connections, if it holds at least least.
func (l *Listener) greediestIdle(least int) *conn {
	for {
		var cs []*conn
		most := least - 1
		for _, mine := range l.clients {
			if len(mine) > most && longestIdle(mine) != nil {
				cs, most = mine, len(mine)
			}
		}
		if cs == nil {
			return nil
		}
		if c := l.takeIdle(cs); c != nil {
			return c
		}
	}
}

func longestIdle(cs []*conn) *conn {
	var oldest *conn
	for _, c := range cs {
		if c.state.Load() == stateIdle && (oldest == nil || c.since < oldest.since) {
			oldest = c
		}
	}
	return oldest
}

// forget drops c from the books; it is called with l.mu held, once per
// connection (given up or closed, whichever comes first).
func (l *Listener) forget(c *conn) {
	if c.gone {
		return
	}
	c.gone = true
	if c.refusal != nil {
		l.refusing--
		return
	}
	cs := l.clients[c.addr]
	for i, o := range cs {
		if o == c {
			cs[i] = cs[len(cs)-1]
			cs[len(cs)-1] = nil
			cs = cs[:len(cs)-1]
			break
		}
	}
	if len(cs) == 0 {
		delete(l.clients, c.addr)
	} else {
		l.clients[c.addr] = cs
	}
	l.stats.Open--
}

// ConnState is the http.Server hook (http.Server.ConnState) that tells the
// Listener which connections wait between requests and may be given up.
// It finds the Listener's connection under a TLS layer.
func (l *Listener) ConnState(nc net.Conn, s http.ConnState) {
	c := unwrap(nc)
	if c == nil || c.l != l || c.refusal != nil {
		return
	}
	switch s {
	case http.StateIdle:
		l.mu.Lock()
		l.clock++
		c.since = l.clock
		c.state.CompareAndSwap(stateBusy, stateIdle)
		l.mu.Unlock()
	case http.StateActive, http.StateHijacked:
		c.state.CompareAndSwap(stateIdle, stateBusy)
	}
}

// ConnState is Listener.ConnState for whichever Listener accepted nc, so a
// server that listens anew after a failure can set it once.
func ConnState(nc net.Conn, s http.ConnState) {
	if c := unwrap(nc); c != nil {
		c.l.ConnState(nc, s)
	}
}

type refusalKey struct{}

// ConnContext is the http.Server hook (http.Server.ConnContext) that marks
// the requests of a connection accepted over a limit, for Refusal, and
// keeps the connection for Conn.
func ConnContext(ctx context.Context, nc net.Conn) context.Context {
	ctx = context.WithValue(ctx, connKey{}, nc)
	if c := unwrap(nc); c != nil && c.refusal != nil {
		return context.WithValue(ctx, refusalKey{}, c.refusal)
	}
	return ctx
}

type connKey struct{}

// Conn is the connection a request came on (ConnContext), for a handler
// that sizes its socket (an event stream's send buffer); nil without one.
func Conn(ctx context.Context) net.Conn {
	c, _ := ctx.Value(connKey{}).(net.Conn)
	return c
}

// Refusal is the error (fault.Unavailable, with a RetryAfter) to answer a
// request with that came on a connection over a limit; nil for the others.
// The answer should carry Connection: close.
func Refusal(ctx context.Context) error {
	err, _ := ctx.Value(refusalKey{}).(error)
	return err
}

// Refuse answers a request that came on a connection over a limit with
// fail (the serving layer's one error writer) and Refusal's error, and has
// the server close the connection after the answer; the others go to next.
func Refuse(next http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := Refusal(r.Context()); err != nil {
			w.Header().Set("Connection", "close")
			fail(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func unwrap(nc net.Conn) *conn {
	for nc != nil {
		switch c := nc.(type) {
		case *conn:
			return c
		case interface{ NetConn() net.Conn }: // *tls.Conn
			nc = c.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// Stats returns the counters so far.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Clients = len(l.clients)
	return s
}

// clientAddr is the address a connection counts against: the IP without
// port, IPv4-mapped IPv6 as IPv4. A listener that is not IP (a Unix socket)
// has one client.
func clientAddr(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// A connection's state: busy from its acceptance (its first request is on
// its way) and in requests, idle between them, given up for good.
const (
	stateBusy int32 = iota
	stateIdle
	stateGivenUp
)

// conn is an accepted connection on the Listener's books until it closes.
type conn struct {
	net.Conn
	l       *Listener
	addr    netip.Addr
	refusal error // set: accepted over a limit, to be answered with it
	state   atomic.Int32
	// deadline orders the server's read deadlines after the one that
	// wakes a connection given up.
	deadline sync.Mutex
	closing  sync.Once
	// Guarded by l.mu.
	since uint64
	gone  bool
}

// Read hands the server what the client sent, and marks the connection
// busy as soon as a request starts to arrive. Once the connection is given
// up the server reads its end instead: what arrives then is dropped, and
// the client sees the connection end, not a reset.
func (c *conn) Read(p []byte) (int, error) {
	if c.state.Load() == stateGivenUp {
		return 0, io.EOF
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.state.CompareAndSwap(stateIdle, stateBusy)
	}
	if c.state.Load() == stateGivenUp {
		return 0, io.EOF
	}
	return n, err
}

// SetReadDeadline keeps a given-up connection's wake-up (a deadline in the
// past) from being pushed back by the server.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.deadline.Lock()
	defer c.deadline.Unlock()
	if c.state.Load() == stateGivenUp {
		return nil
	}
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline is SetReadDeadline for both directions.
func (c *conn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

// giveUp wakes the server's read of an idle connection (marked given up by
// takeIdle), which then ends the connection through Close.
func (c *conn) giveUp() {
	c.deadline.Lock()
	_ = c.Conn.SetReadDeadline(time.Unix(1, 0))
	c.deadline.Unlock()
}

// pending reports whether bytes wait in the socket's receive queue: a
// request that arrived on an idle connection before the server read it.
func (c *conn) pending() bool {
	return inputQueued(c.Conn)
}

// Close frees the connection's place; a connection given up or refused is
// closed gracefully (drain).
func (c *conn) Close() error {
	drain := false
	c.closing.Do(func() {
		l := c.l
		l.mu.Lock()
		l.forget(c)
		if (c.refusal != nil || c.state.Load() == stateGivenUp) && l.draining < l.cfg.Total {
			l.draining++
			drain = true
		}
		l.mu.Unlock()
	})
	if drain {
		c.drain()
		c.l.mu.Lock()
		c.l.draining--
		c.l.mu.Unlock()
	}
	return c.Conn.Close()
}

// drain ends the sending side, so the client has the whole answer and its
// end, then reads what the client still sends until it closes its side
// (briefly, and bounded): closing with unread bytes, or before bytes
// underway arrived, would send a reset that can destroy the answer in the
// client's receive buffer.
func (c *conn) drain() {
	cw, ok := c.Conn.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	if c.Conn.SetReadDeadline(time.Now().Add(drainFor)) != nil {
		return
	}
	var buf [512]byte
	for left := drainMax; left > 0; {
		n, err := c.Conn.Read(buf[:])
		if err != nil {
			return
		}
		left -= n
	}
}

// NetConn is the connection underneath, as crypto/tls's Conn offers it: a
// server may tune the socket of a long-lived response (the event stream
// sizes its send buffer).
func (c *conn) NetConn() net.Conn { return c.Conn }

// CloseWrite lets an http.Server finish a refused request gracefully (it
// half-closes before closing, so the client reads the answer instead of a
// reset).
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}
