package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/httpserve"
)

// One address opening thousands of keep-alive connections at once gets its
// share and no more: other addresses' status requests keep succeeding,
// during and after, and once the flood ends playerd is back to its idle
// goroutines. Loopback only; clients are told apart by source address
// (127.0.0.2 floods, 127.0.0.3-9 ask for the status). Figures (latency,
// memory) come from cmd/flood, not from here.
func TestFloodFromOneAddress(t *testing.T) {
	conns := floodSize(t, 2000)
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	target := strings.TrimPrefix(base, "http://")

	var clients []*statusClient
	for i := range 7 {
		clients = append(clients, newStatusClient(fmt.Sprintf("127.0.0.%d", 3+i), base, i%2 == 1))
	}
	for _, c := range clients {
		if err := c.get(); err != nil {
			t.Fatalf("before the flood: %v", err)
		}
	}
	for _, c := range clients {
		c.close()
	}
	idle := settledGoroutines()

	// The flood: every connection asks for /api/health and stays open.
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		served  []*heldConn
		refused atomic.Int64
	)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	for range conns {
		wg.Go(func() {
			h, err := openHeld(d, target)
			if err != nil {
				refused.Add(1)
				return
			}
			mu.Lock()
			served = append(served, h)
			mu.Unlock()
		})
	}
	// Meanwhile, and after, every other client is answered.
	var cwg sync.WaitGroup
	errs := make(chan error, len(clients))
	for _, c := range clients {
		cwg.Go(func() {
			for range 10 {
				if err := c.get(); err != nil {
					errs <- fmt.Errorf("during the flood: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	cwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	defer func() {
		for _, h := range served {
			h.c.Close()
		}
	}()

	// The flooder keeps its share; the rest were refused or given up.
	var open atomic.Int64
	var owg sync.WaitGroup
	for _, h := range served {
		owg.Go(func() {
			if h.ask(target) == nil {
				open.Add(1)
			}
		})
	}
	owg.Wait()
	t.Logf("flood of %d: %d answered, %d refused at once, %d still open", conns, len(served), refused.Load(), open.Load())
	// Each connection over the share cost the flooder one it held (or was
	// refused), so it ends with exactly its share.
	if open.Load() != httpserve.MaxConnsPerClient {
		t.Errorf("%d flood connections still open; want %d", open.Load(), httpserve.MaxConnsPerClient)
	}
	for _, c := range clients {
		if err := c.get(); err != nil {
			t.Errorf("after the flood: %v", err)
		}
		c.close()
	}

	// Once the flood's connections close, their goroutines end.
	for _, h := range served {
		h.c.Close()
	}
	waitUntil(t, "the goroutines of the flood to end", 30*time.Second, func() bool { return runtime.NumGoroutine() <= idle+10 })
}

// 64 clients behind one address (a home-automation host running several
// integrations, a NAT), each opening a new connection per request as
// scripts and many HTTP libraries do, 50 requests each: every request is
// answered, 200 or 503 with Retry-After, and none is reset or closed
// unanswered. `make bench-flood FLOOD_FLAGS=-burst=64x50` gives the
// figures for a build.
func TestManyClientsBehindOneAddress(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"A": {1}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	var (
		wg         sync.WaitGroup
		okN, busyN atomic.Int64
	)
	errs := make(chan error, 64)
	for range 64 {
		c := newStatusClient("127.0.0.2", base, true)
		wg.Go(func() {
			defer c.close()
			for range 50 {
				resp, err := c.client.Get(base + "/api/health")
				if err != nil {
					errs <- err
					return
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					errs <- err
					return
				case resp.StatusCode == http.StatusOK:
					okN.Add(1)
				case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
					busyN.Add(1)
				default:
					errs <- fmt.Errorf("%s, Retry-After %q", resp.Status, resp.Header.Get("Retry-After"))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("64 clients × 50 requests: %d answered 200, %d 503 with Retry-After", okN.Load(), busyN.Load())
}

// Headers past the limit are refused with 431 before any handler runs.
func TestOversizedHeaderRefused(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"A": {1}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	req, _ := http.NewRequest("GET", base+"/api/status", nil)
	req.Header.Set("X-Filler", strings.Repeat("x", httpserve.MaxHeaderBytes+8<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("%d, want 431", resp.StatusCode)
	}
	req.Header.Set("X-Filler", strings.Repeat("x", 4<<10)) // a large cookie's worth
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("ordinary headers: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

// floodSize is want, or fewer when the open-file limit cannot hold both
// ends of that many connections in this one process.
func floodSize(t *testing.T, want int) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	n := min(want, (int(lim.Cur)-httpserve.MaxConns-200)/2)
	if n < 4*httpserve.MaxConnsPerClient {
		t.Fatalf("open-file limit %d is too low for a flood test", lim.Cur)
	}
	return n
}

// settledGoroutines waits until the goroutine count stops falling (the
// client connections just closed wind down) and returns it.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return m
		}
		n = m
	}
	return n
}

// heldConn is a flood connection that got an answer.
type heldConn struct {
	c  net.Conn
	br *bufio.Reader
}

func openHeld(d *net.Dialer, target string) (*heldConn, error) {
	c, err := d.Dial("tcp", target)
	if err != nil {
		return nil, err
	}
	h := &heldConn{c: c, br: bufio.NewReaderSize(c, 1024)}
	if err := h.ask(target); err != nil {
		c.Close()
		return nil, err
	}
	return h, nil
}

// ask sends GET /api/health on the connection and reads the answer.
func (h *heldConn) ask(target string) error {
	if _, err := io.WriteString(h.c, "GET /api/health HTTP/1.1\r\nHost: "+target+"\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(h.br, nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("health: %s", resp.Status)
	}
	return err
}

// statusClient asks for /api/status from its own loopback address.
type statusClient struct {
	from, url string
	tr        *http.Transport
	client    *http.Client
}

func newStatusClient(from, base string, fresh bool) *statusClient {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	tr := &http.Transport{DialContext: d.DialContext, DisableKeepAlives: fresh}
	return &statusClient{from: from, url: base + "/api/status", tr: tr, client: &http.Client{Transport: tr}}
}

func (c *statusClient) get() error {
	resp, err := c.client.Get(c.url)
	if err != nil {
		return fmt.Errorf("status from %s: %w", c.from, err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status from %s: %s", c.from, resp.Status)
	}
	return err
}

func (c *statusClient) close() { c.tr.CloseIdleConnections() }
