// Package netlimit bounds the connections a server holds open, in total and
// per client address, so that one client cannot take the memory of a small
// box or crowd out the others. It wraps any net.Listener; an http.Server
// reports through ConnState which connections sit idle between requests,
// and those are the ones given up under pressure.
//
// The wrapper accepts every connection the kernel queued, at once, so that
// it sees each one's address: a greedy client's connections never wait in
// the accept queue ahead of another client's. Then:
//
//   - A client at its share (PerClient) that opens another connection loses
//     its own connection that has been idle longest; with none idle, the new
//     connection is closed at once.
//   - When Total connections are open, a new client's connection takes the
//     longest-idle connection of the client holding the most (if that client
//     holds at least two more than the newcomer); otherwise it is closed.
//
// A connection in the middle of a request is never closed by the wrapper.
package netlimit

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// Config bounds the connections of a Listener.
type Config struct {
	// Total caps the connections open at once.
	Total int
	// PerClient caps the connections of one client address.
	PerClient int
}

// Stats counts what a Listener did.
type Stats struct {
	Open    int // connections open now
	Peak    int // most connections open at once
	Clients int // addresses with open connections
	// Refused: connections closed as soon as they were accepted.
	Refused uint64
	// Reclaimed: idle connections closed to make room for a new one.
	Reclaimed uint64
}

// Listener is a net.Listener that keeps to a Config.
type Listener struct {
	net.Listener
	cfg Config

	mu      sync.Mutex
	clients map[netip.Addr][]*conn
	clock   uint64 // orders idle times: smaller is idle longer
	stats   Stats
}

// Wrap bounds the connections accepted from inner. For an http.Server, set
// its ConnState to the Listener's ConnState, or idle connections cannot be
// told apart and only refusing new ones remains.
func Wrap(inner net.Listener, cfg Config) *Listener {
	if cfg.Total < 1 {
		cfg.Total = 1
	}
	if cfg.PerClient < 1 || cfg.PerClient > cfg.Total {
		cfg.PerClient = cfg.Total
	}
	return &Listener{Listener: inner, cfg: cfg, clients: make(map[netip.Addr][]*conn)}
}

// Accept returns the next connection that fits the limits; the others are
// closed here and never reach the server.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		admitted, victim := l.admit(c)
		if victim != nil {
			victim.Conn.Close()
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
	switch {
	case len(mine) >= l.cfg.PerClient:
		victim = longestIdle(mine)
	case l.stats.Open >= l.cfg.Total:
		victim = l.greediestIdle(len(mine) + 2)
	}
	if victim == nil && (len(mine) >= l.cfg.PerClient || l.stats.Open >= l.cfg.Total) {
		l.stats.Refused++
		return nil, nil
	}
	if victim != nil {
		l.forget(victim)
		l.stats.Reclaimed++
	}
	admitted = &conn{Conn: c, l: l, addr: addr} // busy until the server says otherwise
	l.clients[addr] = append(l.clients[addr], admitted)
	l.stats.Open++
	l.stats.Peak = max(l.stats.Peak, l.stats.Open)
	return admitted, victim
}

// greediestIdle returns the longest-idle connection of the client holding
// the most connections, if it holds at least least.
func (l *Listener) greediestIdle(least int) *conn {
	var victim *conn
	most := least - 1
	for _, cs := range l.clients {
		if len(cs) <= most {
			continue
		}
		if c := longestIdle(cs); c != nil {
			victim, most = c, len(cs)
		}
	}
	return victim
}

func longestIdle(cs []*conn) *conn {
	var oldest *conn
	for _, c := range cs {
		if c.idle && (oldest == nil || c.since < oldest.since) {
			oldest = c
		}
	}
	return oldest
}

// forget drops c from the books; it is called with l.mu held, once per
// connection (reclaimed or closed, whichever comes first).
func (l *Listener) forget(c *conn) {
	if c.gone {
		return
	}
	c.gone = true
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

func (l *Listener) tick() uint64 {
	l.clock++
	return l.clock
}

// ConnState is the http.Server hook (http.Server.ConnState) that tells the
// Listener which connections wait for a request (new and idle ones) and may
// be given up. It finds the Listener's connection under a TLS layer.
func (l *Listener) ConnState(nc net.Conn, s http.ConnState) {
	c := unwrap(nc)
	if c == nil || c.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateNew, http.StateIdle:
		c.idle, c.since = true, l.tick()
	case http.StateActive, http.StateHijacked:
		c.idle = false
	}
}

// ConnState is Listener.ConnState for whichever Listener accepted nc, so a
// server that listens anew after a failure can set it once.
func ConnState(nc net.Conn, s http.ConnState) {
	if c := unwrap(nc); c != nil {
		c.l.ConnState(nc, s)
	}
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

// conn is an accepted connection on the Listener's books until it closes.
type conn struct {
	net.Conn
	l    *Listener
	addr netip.Addr
	// Guarded by l.mu.
	idle  bool
	since uint64
	gone  bool
}

// Close frees the connection's place.
func (c *conn) Close() error {
	c.l.mu.Lock()
	c.l.forget(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
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
