package netlimit

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeConn is an accepted connection from a given address that records
// whether it was closed.
type fakeConn struct {
	net.Conn
	remote net.Addr
	closed atomic.Bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error         { c.closed.Store(true); return nil }

type box struct {
	t *testing.T
	l *Listener
}

func newBox(t *testing.T, cfg Config) *box { return &box{t: t, l: Wrap(nil, cfg)} }

// offer has the limiter decide on a new connection from ip; it returns the
// wrapped connection (nil: refused) and closes a reclaimed one as Accept does.
func (b *box) offer(ip string) (*conn, *fakeConn) {
	b.t.Helper()
	fc := &fakeConn{remote: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(ip), 40000))}
	c, victim := b.l.admit(fc)
	if victim != nil {
		victim.Conn.Close()
	}
	if c == nil {
		fc.Close()
	} else {
		b.l.ConnState(c, http.StateNew)
	}
	return c, fc
}

func (b *box) state(c *conn, s http.ConnState) { b.l.ConnState(c, s) }

func closed(c *conn) bool { return c.Conn.(*fakeConn).closed.Load() }

func (b *box) want(open int, refused, reclaimed uint64) {
	b.t.Helper()
	s := b.l.Stats()
	if s.Open != open || s.Refused != refused || s.Reclaimed != reclaimed {
		b.t.Errorf("stats %+v, want open %d, refused %d, reclaimed %d", s, open, refused, reclaimed)
	}
}

// A client at its share loses its longest-idle connection to a new one; with
// all of its connections in requests, the new one is closed at once.
func TestShareTakesLongestIdleThenRefuses(t *testing.T) {
	b := newBox(t, Config{Total: 10, PerClient: 3})
	var cs []*conn
	for range 3 {
		c, _ := b.offer("192.168.1.20")
		if c == nil {
			t.Fatal("refused within the share")
		}
		cs = append(cs, c)
	}
	// The second went idle before the first: it is given up first.
	b.state(cs[0], http.StateActive)
	b.state(cs[1], http.StateActive)
	b.state(cs[2], http.StateActive)
	b.state(cs[1], http.StateIdle)
	b.state(cs[0], http.StateIdle)
	c4, _ := b.offer("192.168.1.20")
	if c4 == nil || !closed(cs[1]) || closed(cs[0]) {
		t.Fatalf("fourth: admitted %v, closed second %v, first %v; want the second (idle longest) given up", c4 != nil, closed(cs[1]), closed(cs[0]))
	}
	b.want(3, 0, 1)
	b.state(cs[0], http.StateActive)
	b.state(c4, http.StateActive)
	c5, fc5 := b.offer("192.168.1.20")
	if c5 != nil || !fc5.closed.Load() {
		t.Fatal("a connection over the share was served while all others were busy")
	}
	b.want(3, 1, 1)
	// Another address is not affected by the first one's share.
	if c, _ := b.offer("192.168.1.21"); c == nil {
		t.Fatal("second client refused")
	}
	b.want(4, 1, 1)
}

// With the total reached, a new client takes an idle connection of the
// client holding the most; clients close to even do not take from each
// other, and connections in requests are never given up.
func TestTotalTakesFromGreediest(t *testing.T) {
	b := newBox(t, Config{Total: 6, PerClient: 4})
	var greedy []*conn
	for range 4 {
		c, _ := b.offer("10.0.0.1")
		greedy = append(greedy, c)
	}
	b1, _ := b.offer("10.0.0.2")
	b2, _ := b.offer("10.0.0.2")
	b.want(6, 0, 0)
	b.state(b2, http.StateActive)
	b.state(b1, http.StateActive)
	b.state(b1, http.StateIdle)

	c1, _ := b.offer("10.0.0.3")
	if c1 == nil || !closed(greedy[0]) {
		t.Fatalf("newcomer: admitted %v, greediest client's oldest closed %v", c1 != nil, closed(greedy[0]))
	}
	if closed(b1) {
		t.Error("an idle connection of a smaller client was given up")
	}
	b.want(6, 0, 1)
	b.state(c1, http.StateActive)
	for _, c := range greedy[1:] {
		b.state(c, http.StateActive)
	}
	// 10.0.0.1 (3, busy), 10.0.0.2 (2, one idle), 10.0.0.3 (1): a fourth
	// client may take 10.0.0.2's idle one (2 ≥ 0+2) ...
	c2, _ := b.offer("10.0.0.4")
	if c2 == nil || !closed(b1) {
		t.Fatalf("fourth client: admitted %v, idle connection of 10.0.0.2 closed %v", c2 != nil, closed(b1))
	}
	// ... but now every idle connection is gone: the next one is refused.
	b.state(c2, http.StateActive)
	if c, fc := b.offer("10.0.0.5"); c != nil || !fc.closed.Load() {
		t.Fatal("admitted over the total with every connection busy")
	}
	b.want(6, 1, 2)
	if s := b.l.Stats(); s.Peak != 6 || s.Clients != 4 {
		t.Errorf("peak %d, clients %d; want 6, 4", s.Peak, s.Clients)
	}
	// A closed connection frees its place.
	greedy[1].Close()
	if c, _ := b.offer("10.0.0.5"); c == nil {
		t.Fatal("refused after a connection closed")
	}
	b.want(6, 1, 2)
}

// Without the server's ConnState reports no connection counts as idle, so
// nothing is given up mid-request; closing twice frees one place.
func TestWithoutConnStateOnlyRefuses(t *testing.T) {
	b := newBox(t, Config{Total: 2, PerClient: 2})
	fc1 := &fakeConn{remote: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 1}}
	c1, _ := b.l.admit(fc1)
	c2, _ := b.l.admit(&fakeConn{remote: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 2}})
	if c, _ := b.l.admit(&fakeConn{remote: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 3}}); c != nil || fc1.closed.Load() {
		t.Fatal("a connection without ConnState reports was taken as idle")
	}
	c1.Close()
	c1.Close()
	b.want(1, 1, 0)
	_ = c2
}

// IPv4-mapped IPv6 addresses are the same client as their IPv4 form.
func TestClientAddr(t *testing.T) {
	a := clientAddr(&net.TCPAddr{IP: net.ParseIP("::ffff:192.168.1.5"), Port: 1})
	b := clientAddr(&net.TCPAddr{IP: net.ParseIP("192.168.1.5").To4(), Port: 2})
	if a != b || !a.Is4() {
		t.Errorf("%v and %v differ", a, b)
	}
}

// Under TLS the server reports the *tls.Conn; the limiter finds its own
// connection beneath it.
func TestConnStateUnderTLS(t *testing.T) {
	b := newBox(t, Config{Total: 1, PerClient: 1})
	c, _ := b.offer("10.0.0.1")
	b.state(c, http.StateActive)
	b.l.ConnState(tls.Server(c, &tls.Config{}), http.StateIdle)
	if n, _ := b.offer("10.0.0.1"); n == nil || !closed(c) {
		t.Fatal("the idle state reported for the TLS connection did not reach the limiter")
	}
}

// Through a real http.Server on loopback: a flood from one address never
// pushes the open connections past the total, other addresses are served
// throughout, and every place is free again once the clients close.
func TestServerUnderFlood(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Room for the three well-behaved clients (4 connections each) and the
	// flood's share: the flood must lose everything beyond its share, and
	// nobody else anything. Reclaiming under a full table is the unit
	// tests' business above; here a fresh connection whose request has
	// not arrived yet would count as idle and could be taken.
	l := Wrap(inner, Config{Total: 20, PerClient: 8})
	srv := &http.Server{
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }),
		ConnState: l.ConnState,
	}
	go srv.Serve(l)
	defer srv.Close()
	url := "http://" + inner.Addr().String() + "/"

	client := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		// A new connection per request: a kept-alive one that the limiter
		// reclaims while idle can be reset just as the client reuses it,
		// which real clients retry and which is not what this test is about.
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	}
	var wg sync.WaitGroup
	var flood []net.Conn
	var mu sync.Mutex
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	for range 300 {
		wg.Go(func() {
			c, err := d.Dial("tcp", inner.Addr().String())
			if err != nil {
				return
			}
			mu.Lock()
			flood = append(flood, c)
			mu.Unlock()
			// An answer, or the close of a refusal: either way the
			// listener has decided on this connection.
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				resp.Body.Close()
			}
		})
	}
	// Three other clients, each with several connections at once.
	var others []*http.Client
	for i := range 3 {
		c := client(fmt.Sprintf("127.0.0.%d", 3+i))
		others = append(others, c)
		for range 4 {
			wg.Go(func() {
				for range 5 {
					resp, err := c.Get(url)
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
	}
	wg.Wait()
	s := l.Stats()
	if s.Peak > 20 {
		t.Errorf("peak %d connections, total 20", s.Peak)
	}
	if int(s.Refused+s.Reclaimed) < len(flood)-8 {
		t.Errorf("refused %d + reclaimed %d of a %d-connection flood; want all but 8", s.Refused, s.Reclaimed, len(flood))
	}
	for _, c := range flood {
		c.Close()
	}
	for _, c := range others {
		c.CloseIdleConnections()
	}
	for l.Stats().Open > 0 {
		time.Sleep(10 * time.Millisecond) // the server notices the closes
	}
	t.Logf("%+v", l.Stats())
}
