package netlimit

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// fakeConn is an accepted connection from a given address that records
// whether it was closed and its read deadline.
type fakeConn struct {
	net.Conn
	remote   net.Addr
	closed   atomic.Bool
	mu       sync.Mutex
	deadline time.Time
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error         { c.closed.Store(true); return nil }
func (c *fakeConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return nil
}

func (c *fakeConn) readDeadline() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline
}

type box struct {
	t *testing.T
	l *Listener
}

func newBox(t *testing.T, cfg Config) *box { return &box{t: t, l: Wrap(nil, cfg)} }

// offer has the limiter decide on a new connection from ip, as Accept does:
// it returns the wrapped connection (nil: dropped) and gives up a victim.
func (b *box) offer(ip string) (*conn, *fakeConn) {
	b.t.Helper()
	fc := &fakeConn{remote: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(ip), 40000))}
	c, victim := b.l.admit(fc)
	if victim != nil {
		victim.giveUp()
	}
	if c == nil {
		fc.Close()
	} else {
		b.l.ConnState(c, http.StateNew)
	}
	return c, fc
}

// served offers a connection that must be served within the limits.
func (b *box) served(ip string) *conn {
	b.t.Helper()
	c, _ := b.offer(ip)
	if c == nil || c.refusal != nil {
		b.t.Fatalf("a connection from %s within the limits was refused", ip)
	}
	return c
}

// refused offers a connection that must be answered with a refusal.
func (b *box) refused(ip string) *conn {
	b.t.Helper()
	c, _ := b.offer(ip)
	if c == nil || c.refusal == nil {
		b.t.Fatalf("a connection from %s over a limit was not refused with an answer (%v)", ip, c)
	}
	return c
}

func (b *box) state(c *conn, s http.ConnState) { b.l.ConnState(c, s) }

// idle is a served connection that had a request and waits for the next.
func (b *box) idle(c *conn) {
	b.state(c, http.StateActive)
	b.state(c, http.StateIdle)
}

func givenUp(c *conn) bool { return c.state.Load() == stateGivenUp }

func (b *box) want(open int, refused, dropped, reclaimed uint64) {
	b.t.Helper()
	s := b.l.Stats()
	if s.Open != open || s.Refused != refused || s.Dropped != dropped || s.Reclaimed != reclaimed {
		b.t.Errorf("stats %+v, want open %d, refused %d, dropped %d, reclaimed %d", s, open, refused, dropped, reclaimed)
	}
}

// A client at its share gives up its longest-idle connection to a new one;
// with all of its connections new or in requests, the new one is answered
// with a refusal (503 with Retry-After), and nothing is given up.
func TestShareTakesLongestIdleThenRefuses(t *testing.T) {
	b := newBox(t, Config{Total: 10, PerClient: 3})
	cs := []*conn{b.served("192.168.1.20"), b.served("192.168.1.20"), b.served("192.168.1.20")}
	// New connections, whose requests have not arrived yet, are not idle.
	r := b.refused("192.168.1.20")
	for i, c := range cs {
		if givenUp(c) {
			t.Fatalf("new connection %d was given up", i)
		}
	}
	b.want(3, 1, 0, 0)
	err := Refusal(ConnContext(context.Background(), r))
	if fault.KindOf(err) != fault.Unavailable || fault.RetryAfterOf(err) != time.Second {
		t.Errorf("refusal %v: want unavailable with Retry-After 1 s", err)
	}
	if Refusal(ConnContext(context.Background(), cs[0])) != nil {
		t.Error("a connection within the limits is marked refused")
	}
	r.Close()

	// The second went idle before the first: it is given up first, and
	// its server's read is woken.
	b.idle(cs[1])
	b.idle(cs[0])
	b.served("192.168.1.20")
	if !givenUp(cs[1]) || givenUp(cs[0]) {
		t.Fatalf("given up: second %v, first %v; want the second (idle longest)", givenUp(cs[1]), givenUp(cs[0]))
	}
	fc := cs[1].Conn.(*fakeConn)
	if d := fc.readDeadline(); d.IsZero() || d.After(time.Now()) {
		t.Errorf("read deadline of the given-up connection %v, want one in the past", d)
	}
	// The server cannot push the wake-up back, and reads the end.
	cs[1].SetReadDeadline(time.Now().Add(time.Minute))
	if d := fc.readDeadline(); d.After(time.Now()) {
		t.Error("the server moved a given-up connection's read deadline")
	}
	if n, err := cs[1].Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("read of a given-up connection: %d, %v; want EOF", n, err)
	}
	b.want(3, 1, 0, 1)
	cs[1].Close()
	if !fc.closed.Load() {
		t.Error("closing the given-up connection did not close it")
	}
	b.want(3, 1, 0, 1)

	// With the others busy again: refused.
	b.state(cs[0], http.StateActive)
	b.refused("192.168.1.20")
	b.want(3, 2, 0, 1)
	// Another address is not affected by the first one's share.
	b.served("192.168.1.21")
	b.want(4, 2, 0, 1)
}

// With the total reached, a new client takes an idle connection of the
// client holding the most; clients close to even do not take from each
// other, and connections in requests are never given up.
func TestTotalTakesFromGreediest(t *testing.T) {
	b := newBox(t, Config{Total: 6, PerClient: 4})
	var greedy []*conn
	for range 4 {
		c := b.served("10.0.0.1")
		b.idle(c)
		greedy = append(greedy, c)
	}
	b1 := b.served("10.0.0.2")
	b.served("10.0.0.2")
	b.want(6, 0, 0, 0)
	b.idle(b1)

	b.served("10.0.0.3")
	if !givenUp(greedy[0]) {
		t.Fatal("the greediest client's oldest idle connection was not given up")
	}
	if givenUp(b1) {
		t.Error("an idle connection of a smaller client was given up")
	}
	b.want(6, 0, 0, 1)
	for _, c := range greedy[1:] {
		b.state(c, http.StateActive)
	}
	// 10.0.0.1 (3, busy), 10.0.0.2 (2, one idle), 10.0.0.3 (1): a fourth
	// client may take 10.0.0.2's idle one (2 ≥ 0+2) ...
	b.served("10.0.0.4")
	if !givenUp(b1) {
		t.Fatal("the idle connection of 10.0.0.2 was not given up")
	}
	// ... but now nothing is idle: the next one is refused.
	b.refused("10.0.0.5")
	b.want(6, 1, 0, 2)
	if s := b.l.Stats(); s.Peak != 6 || s.Clients != 4 {
		t.Errorf("peak %d, clients %d; want 6, 4", s.Peak, s.Clients)
	}
	// A closed connection frees its place.
	greedy[1].Close()
	b.served("10.0.0.5")
	b.want(6, 1, 0, 2)
}

// Refusals are bounded: beyond Refusing at once a connection is closed
// unanswered; a refused connection's close frees its refusal.
func TestRefusingBounded(t *testing.T) {
	b := newBox(t, Config{Total: 2, PerClient: 2, Refusing: 2})
	b.served("10.0.0.1")
	b.served("10.0.0.1")
	r1 := b.refused("10.0.0.1")
	b.refused("10.0.0.2")
	if c, fc := b.offer("10.0.0.1"); c != nil || !fc.closed.Load() {
		t.Fatal("a third refusal at once was served")
	}
	b.want(2, 2, 1, 0)
	r1.Close()
	r1.Close()
	b.refused("10.0.0.3")
	b.want(2, 3, 1, 0)
}

// Without the server's ConnState reports no connection counts as idle, so
// nothing is given up; closing twice frees one place.
func TestWithoutConnStateNothingGivenUp(t *testing.T) {
	b := newBox(t, Config{Total: 2, PerClient: 2})
	c1, _ := b.l.admit(&fakeConn{remote: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 1}})
	b.l.admit(&fakeConn{remote: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 2}})
	if c, v := b.l.admit(&fakeConn{remote: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 3}}); c == nil || c.refusal == nil || v != nil {
		t.Fatal("a connection without ConnState reports was taken as idle")
	}
	c1.Close()
	c1.Close()
	b.want(1, 1, 0, 0)
}

// A request that starts to arrive on an idle connection makes it busy at
// the first byte, before the server reports it active.
func TestArrivingRequestIsBusy(t *testing.T) {
	b := newBox(t, Config{Total: 4, PerClient: 1})
	server, client := net.Pipe()
	defer client.Close()
	c, _ := b.l.admit(&addrConn{Conn: server, remote: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 1}})
	b.idle(c)
	go io.WriteString(client, "G")
	if n, err := c.Read(make([]byte, 4)); n != 1 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	if n, _ := b.offer("10.0.0.1"); n == nil || n.refusal == nil || givenUp(c) {
		t.Fatal("a connection whose request was arriving was given up")
	}
}

type addrConn struct {
	net.Conn
	remote net.Addr
}

func (c *addrConn) RemoteAddr() net.Addr { return c.remote }

// IPv4-mapped IPv6 addresses are the same client as their IPv4 form.
func TestClientAddr(t *testing.T) {
	a := clientAddr(&net.TCPAddr{IP: net.ParseIP("::ffff:192.168.1.5"), Port: 1})
	b := clientAddr(&net.TCPAddr{IP: net.ParseIP("192.168.1.5").To4(), Port: 2})
	if a != b || !a.Is4() {
		t.Errorf("%v and %v differ", a, b)
	}
}

// Under TLS the server reports the *tls.Conn; the limiter finds its own
// connection beneath it, for the states and for the refusal.
func TestConnStateUnderTLS(t *testing.T) {
	b := newBox(t, Config{Total: 1, PerClient: 1})
	c := b.served("10.0.0.1")
	b.state(c, http.StateActive)
	b.l.ConnState(tls.Server(c, &tls.Config{}), http.StateIdle)
	b.served("10.0.0.1")
	if !givenUp(c) {
		t.Fatal("the idle state reported for the TLS connection did not reach the limiter")
	}
	r := b.refused("10.0.0.1")
	if Refusal(ConnContext(context.Background(), tls.Server(r, &tls.Config{}))) == nil {
		t.Error("the refusal of a TLS connection was not found")
	}
}

// serve runs an http.Server on a loopback listener under cfg; its handler
// answers refusals as a real one does (Refuse: 503, Retry-After,
// Connection: close) and the others through h.
func serve(t *testing.T, cfg Config, h http.HandlerFunc) (*Listener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(inner, cfg)
	srv := &http.Server{
		Handler: Refuse(h, func(w http.ResponseWriter, _ *http.Request, err error) {
			w.Header().Set("Retry-After", strconv.Itoa(int(fault.RetryAfterOf(err)/time.Second)))
			http.Error(w, fault.Message(err), http.StatusServiceUnavailable)
		}),
		ConnState:   ConnState,
		ConnContext: ConnContext,
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, inner.Addr().String()
}

func ok(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }

// fromAddr is a client that opens a new connection from ip for every
// request, as scripts and many HTTP libraries do.
func fromAddr(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// answer checks one answer: 200, or 503 with Retry-After; anything else,
// a reset or a connection closed without an answer is an error.
func answer(resp *http.Response, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		return 0, err
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
	default:
		return 0, fmt.Errorf("%s (Retry-After %q)", resp.Status, resp.Header.Get("Retry-After"))
	}
	return resp.StatusCode, nil
}

// 64 clients behind one address, each a new connection per request, 50
// requests each, against a share of 8: every request is answered, 200 or
// 503 with Retry-After; none is reset or closed unanswered. The server
// closes a connection right after its answer, so a client holds about two
// at a time: room for 128 refusals means none is dropped.
func TestManyClientsBehindOneAddress(t *testing.T) {
	l, addr := serve(t, Config{Total: 32, PerClient: 8, Refusing: 128}, ok)
	var wg sync.WaitGroup
	var okN, busyN atomic.Int64
	errs := make(chan error, 64)
	for range 64 {
		c := fromAddr("127.0.0.2")
		wg.Go(func() {
			for range 50 {
				status, err := answer(c.Get("http://" + addr + "/"))
				if err != nil {
					errs <- err
					return
				}
				if status == http.StatusOK {
					okN.Add(1)
				} else {
					busyN.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("200: %d, 503: %d; %+v", okN.Load(), busyN.Load(), l.Stats())
}

// A connection over the share while the share is in requests is answered
// 503 with Retry-After and closed cleanly, before and after its request
// arrives; the requests in progress finish.
func TestRefusedConnectionReadsItsAnswer(t *testing.T) {
	hold := make(chan struct{})
	var in sync.WaitGroup
	in.Add(2)
	_, addr := serve(t, Config{Total: 8, PerClient: 2}, func(w http.ResponseWriter, r *http.Request) {
		in.Done()
		<-hold
		ok(w, r)
	})
	c := fromAddr("127.0.0.2")
	results := make(chan error, 2)
	for range 2 {
		go func() {
			status, err := answer(c.Get("http://" + addr + "/"))
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("held request: %d", status)
			}
			results <- err
		}()
	}
	in.Wait()
	// A request with a body the handler never reads.
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	raw, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	io.WriteString(raw, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	br := bufio.NewReader(raw)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("%s, Retry-After %q, body %q, %v; want 503 with Retry-After 1", resp.Status, resp.Header.Get("Retry-After"), body, err)
	}
	// Then the end of the connection, not a reset.
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("after the answer: %d, %v; want EOF", n, err)
	}
	close(hold)
	for range 2 {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
}

// An idle keep-alive connection given up for a new one ends cleanly: its
// client sees the end (and retries on a new connection), never a reset.
func TestGivenUpIdleConnectionEndsCleanly(t *testing.T) {
	l, addr := serve(t, Config{Total: 8, PerClient: 1}, ok)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	first, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	br := bufio.NewReader(first)
	io.WriteString(first, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// The server reports the connection idle once the answer is written;
	// the client has it already, so wait for the report.
	for !idleIn(l) {
		time.Sleep(time.Millisecond)
	}
	if status, err := answer(fromAddr("127.0.0.2").Get("http://" + addr + "/")); err != nil || status != http.StatusOK {
		t.Fatalf("new connection: %d, %v", status, err)
	}
	// The first connection was given up: its end, not a reset.
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("given-up connection read %d, %v; want EOF (not a reset)", n, err)
	}
	if s := l.Stats(); s.Reclaimed != 1 {
		t.Errorf("%+v; want one reclaimed", s)
	}
}

func idleIn(l *Listener) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, cs := range l.clients {
		for _, c := range cs {
			if c.state.Load() == stateIdle {
				return true
			}
		}
	}
	return false
}

// Through a real http.Server on loopback: a flood from one address never
// pushes the open connections past the total, other addresses are served
// throughout, and every place is free again once the clients close.
func TestServerUnderFlood(t *testing.T) {
	// Room for the three well-behaved clients (4 connections each, and
	// the ones the server is closing) and the flood's share: the flood
	// loses everything beyond its share, nobody else anything.
	l, addr := serve(t, Config{Total: 32, PerClient: 8}, ok)
	url := "http://" + addr + "/"

	var wg sync.WaitGroup
	var flood []net.Conn
	var mu sync.Mutex
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	for range 300 {
		wg.Go(func() {
			c, err := d.Dial("tcp", addr)
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
		c := fromAddr(fmt.Sprintf("127.0.0.%d", 3+i))
		others = append(others, c)
		for range 4 {
			wg.Go(func() {
				for range 5 {
					if status, err := answer(c.Get(url)); err != nil || status != http.StatusOK {
						t.Errorf("another client: %d, %v", status, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	s := l.Stats()
	if s.Peak > 32 {
		t.Errorf("peak %d connections, total 32", s.Peak)
	}
	if int(s.Refused+s.Dropped+s.Reclaimed) < len(flood)-8 {
		t.Errorf("refused %d + dropped %d + reclaimed %d of a %d-connection flood; want all but 8", s.Refused, s.Dropped, s.Reclaimed, len(flood))
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
