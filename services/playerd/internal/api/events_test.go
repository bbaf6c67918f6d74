package api

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/storybox/storybox/services/playerd/internal/netlimit"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/events/playerfeed"
)

// frame is one thing read from an event stream: an event, or a comment.
type frame struct {
	id      string
	event   string
	data    string
	comment bool
}

// sseReader parses text/event-stream as EventSource does, for what the box
// sends (one data line per event).
type sseReader struct{ r *bufio.Reader }

func (s *sseReader) next() (frame, error) {
	var f frame
	seen := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return f, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if seen {
				return f, nil
			}
			continue
		}
		seen = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			f.comment = true
		case "id":
			f.id = value
		case "event":
			f.event = value
		case "data":
			f.data = value
		case "retry":
			seen = false // a field of its own, not an event
		}
	}
}

// nextEvent skips comments (heartbeats).
func (s *sseReader) nextEvent(t *testing.T) frame {
	t.Helper()
	for {
		f, err := s.next()
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if !f.comment {
			return f
		}
	}
}

// streamBox is a box served over real HTTP with the event feed, as run
// wires it.
type streamBox struct {
	*box
	bus *events.Bus
	url string
	srv *httptest.Server
}

func newStreamBox(t *testing.T, lim StreamLimits, server func(*http.Server)) *streamBox {
	t.Helper()
	bus := events.New(events.Config{FirstID: 1000})
	b := newBox(t, func(d *Deps) { d.Events, d.Streams = bus, lim })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	feed := playerfeed.New(b.p, bus, nil, func(err error) { t.Error(err) })
	go func() {
		defer close(done)
		feed.Run(ctx)
	}()
	srv := httptest.NewUnstartedServer(b.srv)
	srv.Config.ConnContext = netlimit.ConnContext
	if server != nil {
		server(srv.Config)
	}
	srv.Start()
	t.Cleanup(func() {
		bus.Close() // ends the streams, as run does before shutting the server down
		srv.Close()
		cancel()
		<-done
	})
	return &streamBox{box: b, bus: bus, url: srv.URL, srv: srv}
}

// open starts a stream; header pairs go into the request.
func (sb *streamBox) open(t *testing.T, header ...string) (*http.Response, *sseReader) {
	t.Helper()
	resp := sb.get(t, header...)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /api/events: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, &sseReader{bufio.NewReader(resp.Body)}
}

func (sb *streamBox) get(t *testing.T, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", sb.url+"/api/events", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultTransport.(*http.Transport).Clone().RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (sb *streamBox) command(t *testing.T, body string) {
	t.Helper()
	if code, st, _ := sb.call("POST", "/api/command", body); code != 200 {
		t.Fatalf("%s: %d %v", body, code, st)
	}
}

func TestEventStreamStartsWithTheStatusThenFollows(t *testing.T) {
	sb := newStreamBox(t, StreamLimits{}, nil)
	resp, s := sb.open(t)
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", resp.Header)
	}
	first := s.nextEvent(t)
	var st map[string]any
	if err := json.Unmarshal([]byte(first.data), &st); err != nil {
		t.Fatal(err)
	}
	if first.event != "status" || first.id != "999" || st["state"] != "stopped" || st["volume"] != 30.0 || st["at"] == nil {
		t.Errorf("first event %+v", first)
	}
	if _, ok := st["queue"]; !ok {
		t.Errorf("the status event lacks the queue: %s", first.data)
	}
	sb.command(t, `{"action":"folder","folder_id":"`+sb.folderID("Folge A")+`"}`)
	sb.command(t, `{"action":"volume","value":50}`)
	want := []string{"queue", "track", "state", "modes", "volume"} // modes: the folder started in its mode
	last := 999
	for _, kind := range want {
		f := s.nextEvent(t)
		id, _ := strconv.Atoi(f.id)
		if f.event != kind || id != last+1 {
			t.Fatalf("got %s id %s, want %s id %d", f.event, f.id, kind, last+1)
		}
		last = id
	}
}

// A client that reconnects with the id of the last event it read gets
// exactly what it missed; one whose id the box no longer has (or never
// gave) gets a reset and the full status.
func TestEventStreamResumes(t *testing.T) {
	sb := newStreamBox(t, StreamLimits{PerClient: 10}, nil)
	_, s := sb.open(t)
	s.nextEvent(t) // status
	for v := range 5 {
		sb.command(t, `{"action":"volume","value":`+strconv.Itoa(10+v)+`}`)
		if f := s.nextEvent(t); f.event != "volume" {
			t.Fatalf("event %+v", f)
		}
	}
	// 1000..1004 are the five volume events.
	_, again := sb.open(t, "Last-Event-ID", "1002")
	for _, id := range []string{"1003", "1004"} {
		if f := again.nextEvent(t); f.id != id || f.event != "volume" {
			t.Errorf("replay: %+v, want id %s", f, id)
		}
	}
	sb.command(t, `{"action":"volume","value":40}`)
	if f := again.nextEvent(t); f.id != "1005" || f.data != `{"volume":40,"max_volume":70}` {
		t.Errorf("after the replay: %+v", f)
	}
	for _, bad := range []string{"5", "99999", "garbage", "-1"} {
		_, r := sb.open(t, "Last-Event-ID", bad)
		reset, status := r.nextEvent(t), r.nextEvent(t)
		if reset.event != "reset" || reset.id != "" || status.event != "status" || status.id != "1005" {
			t.Errorf("Last-Event-ID %s: %+v then %+v", bad, reset, status)
		}
	}
}

// The server's ReadTimeout and WriteTimeout, meant for ordinary requests,
// do not end a stream; heartbeats flow while nothing happens.
func TestEventStreamOutlivesServerTimeouts(t *testing.T) {
	const timeout = 100 * time.Millisecond
	sb := newStreamBox(t, StreamLimits{Heartbeat: 10 * time.Millisecond}, func(s *http.Server) {
		s.ReadTimeout, s.WriteTimeout = timeout, timeout
	})
	start := time.Now()
	_, s := sb.open(t)
	s.nextEvent(t)
	beats := 0
	for time.Since(start) < 5*timeout {
		f, err := s.next()
		if err != nil {
			t.Fatalf("stream ended after %v and %d heartbeats: %v", time.Since(start), beats, err)
		}
		if !f.comment {
			t.Fatalf("unexpected %+v", f)
		}
		beats++
	}
	sb.command(t, `{"action":"volume","value":45}`)
	if f := s.nextEvent(t); f.event != "volume" {
		t.Errorf("after %d heartbeats: %+v", beats, f)
	}
}

func TestEventStreamLimits(t *testing.T) {
	sb := newStreamBox(t, StreamLimits{Total: 3, PerClient: 2}, nil)
	sb.open(t)
	second, _ := sb.open(t)
	resp := sb.get(t)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "too many event streams from this address") {
		t.Errorf("third stream of one address: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	// A stream that ends gives its place back.
	second.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := sb.get(t)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed stream's place was not given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestEventStreamTotalLimit(t *testing.T) {
	sb := newStreamBox(t, StreamLimits{Total: 1, PerClient: 5}, nil)
	sb.open(t)
	resp := sb.get(t)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(body), "too many event streams open") {
		t.Errorf("second stream with room for one: %d %s", resp.StatusCode, body)
	}
}

func TestEventStreamRefusesForeignHostsAndNeedsAFeed(t *testing.T) {
	sb := newStreamBox(t, StreamLimits{}, nil)
	req, _ := http.NewRequest("GET", sb.url+"/api/events", nil)
	req.Host = "attacker.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("foreign Host: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if st := sb.bus.Stats(); st.Subscribers != 0 {
		t.Errorf("a refused stream subscribed: %+v", st)
	}

	// EventSource always sends Origin: the box's own pages pass, another
	// site's page gets no stream (it could not read it anyway).
	for _, h := range [][]string{
		{"Origin", "http://attacker.example"},
		{"Sec-Fetch-Site", "cross-site"},
	} {
		resp := sb.get(t, h...)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("%s: %d %s", h[0], resp.StatusCode, body)
		}
	}
	_, s := sb.open(t, "Origin", sb.url, "Sec-Fetch-Site", "same-origin")
	if f := s.nextEvent(t); f.event != "status" {
		t.Errorf("same origin: %+v", f)
	}

	b := newBox(t, nil)
	code, body, _ := b.call("GET", "/api/events", "")
	if code != 503 || body["error"] != "event feed unavailable" {
		t.Errorf("without a feed: %d %v", code, body)
	}
	code, _, h := b.call("HEAD", "/api/events", "")
	if code != 503 {
		t.Errorf("HEAD without a feed: %d %v", code, h)
	}
}

func TestEventStreamHead(t *testing.T) {
	sb := newStreamBox(t, StreamLimits{}, nil)
	code, _, h := sb.call("HEAD", "/api/events", "")
	if code != 200 || h.Get("Content-Type") != "text/event-stream" || sb.bus.Stats().Subscribers != 0 {
		t.Errorf("HEAD: %d %v, %+v", code, h, sb.bus.Stats())
	}
}

// dialStalled opens a stream with a small receive buffer, reads up to its
// first event (so the box has subscribed it) and then never reads again.
func dialStalled(t *testing.T, url string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		_ = c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	c, err := d.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET /api/events HTTP/1.1\r\nHost: box\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stalled stream: %v", err)
		}
		if strings.HasPrefix(line, "event: status") {
			return c
		}
	}
}

// A client that stops reading is dropped once it is further behind than
// the feed keeps; publishing never waits for it, and a client that reads
// gets every event in order meanwhile.
func TestStalledStreamIsDropped(t *testing.T) {
	sb := newStreamBox(t, StreamLimits{WriteTimeout: 2 * time.Second}, nil)
	_, good := sb.open(t)
	good.nextEvent(t)
	stalled := dialStalled(t, sb.url)

	// The reading client reports each event it got.
	var ids []string
	read := make(chan int, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			f, err := good.next()
			if err != nil {
				return
			}
			if !f.comment {
				ids = append(ids, f.id)
				select { // the newest count replaces one not taken yet
				case <-read:
				default:
				}
				read <- len(ids)
			}
		}
	}()
	// caughtUp waits until the reading client has n events: the test is
	// about the stalled client, so the other one is given time to keep up.
	caughtUp := func(n int) {
		t.Helper()
		for {
			select {
			case got := <-read:
				if got >= n {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the reading client is stuck below %d events", n)
			}
		}
	}
	pad := strings.Repeat("x", 200)
	const limit = 20000
	published := 0
	for sb.bus.Stats().Dropped == 0 {
		if published == limit {
			t.Fatalf("%d events published and the stalled stream is still there", limit)
		}
		if err := sb.bus.Publish(events.KindMessage, map[string]string{"message": pad}); err != nil {
			t.Fatal(err)
		}
		published++
		if published%50 == 0 {
			caughtUp(published)
		}
	}
	t.Logf("the stalled stream was dropped after %d events", published)
	// The box closes the stalled connection: reading it now ends.
	_ = stalled.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, stalled)
	if err != nil {
		t.Errorf("the stalled connection was not closed: %v after %d bytes", err, n)
	}
	if n > 1<<20 {
		t.Errorf("the stalled client was sent %d bytes", n)
	}
	caughtUp(published)
	sb.bus.Close()
	<-ended
	for i, id := range ids {
		if id != strconv.Itoa(1000+i) {
			t.Fatalf("event %d has id %s", i, id)
		}
	}
	if len(ids) != published {
		t.Errorf("the reading client got %d of %d events", len(ids), published)
	}
}
