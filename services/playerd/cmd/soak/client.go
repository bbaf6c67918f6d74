package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"time"
)

// client is one member of the household: its own source address on
// loopback (127.0.0.N, so the per-address limits see separate clients), its
// own connections, and for a parent a cookie jar.
type client struct {
	name string
	s    *soak
	hc   *http.Client
	base string
}

// answer is one request's outcome.
type answer struct {
	code        int
	hdr         http.Header
	body        []byte
	err         error
	sent, got   time.Time
	life        int  // the box's life it was sent in
	interrupted bool // a kill came while it ran
}

func (a answer) json(v any) error { return json.Unmarshal(a.body, v) }

// retryAfter is the answer's Retry-After, at least a second.
func (a answer) retryAfter() time.Duration {
	n, err := strconv.Atoi(a.hdr.Get("Retry-After"))
	if err != nil || n < 1 {
		n = 1
	}
	return time.Duration(n) * time.Second
}

// transport dials from the given loopback address.
func transport(src string, tlsConf *tls.Config) *http.Transport {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Transport{DialContext: d.DialContext, TLSClientConfig: tlsConf, MaxIdleConnsPerHost: 2,
		IdleConnTimeout: 30 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ForceAttemptHTTP2: false}
}

func (s *soak) newClient(name, src, base string, withJar bool) *client {
	hc := &http.Client{Transport: transport(src, nil), Timeout: 30 * time.Second}
	if withJar {
		hc.Jar, _ = cookiejar.New(nil)
	}
	return &client{name: name, s: s, hc: hc, base: base}
}

// req is one request: method, path (below the client's base), body and
// its type, and the statuses it may get beside the ones every request may
// (503 and 429 with Retry-After).
type req struct {
	op     string // the operation's name in the report
	method string
	path   string
	body   []byte
	ctype  string
	header http.Header
	ok     []int
}

func jsonReq(op, method, path string, body any, ok ...int) req {
	r := req{op: op, method: method, path: path, ok: ok}
	if body != nil {
		r.body, _ = json.Marshal(body)
		r.ctype = "application/json"
	}
	return r
}

// do sends r in the box's current life, waiting while it restarts, and
// judges the answer. usable: the status is one of r.ok.
func (c *client) do(ctx context.Context, r req) (a answer, usable bool) {
	life := c.s.gate.enter()
	defer c.s.gate.leave()
	a = c.send(ctx, r)
	a.life = life
	a.interrupted = a.err != nil && c.s.gate.interrupted(life)
	if ctx.Err() != nil && a.err != nil {
		return a, false // the soak is ending
	}
	return a, c.s.rec.judge(life, r.op, &a, r.ok)
}

// send is do without the gate and the judge: for the restart's own checks.
func (c *client) send(ctx context.Context, r req) answer {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	var a answer
	hr, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, body)
	if err != nil {
		a.err = err
		return a
	}
	for k, vs := range r.header {
		hr.Header[k] = vs
	}
	if r.ctype != "" {
		hr.Header.Set("Content-Type", r.ctype)
	}
	a.sent = time.Now()
	resp, err := c.hc.Do(hr)
	if err == nil {
		a.body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		a.code, a.hdr = resp.StatusCode, resp.Header
	}
	a.got, a.err = time.Now(), err
	return a
}

// pause waits d or until ctx ends, and reports whether to go on.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// fetch is do, or, while the restart holds the gate (gated false), a plain
// send judged the same way.
func (c *client) fetch(ctx context.Context, r req, gated bool) (answer, bool) {
	if gated {
		return c.do(ctx, r)
	}
	a := c.send(ctx, r)
	a.life = int(c.s.gate.life.Load())
	return a, c.s.rec.judge(a.life, r.op, &a, r.ok)
}
