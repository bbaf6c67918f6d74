// Package httpserve serves playerd's two HTTP APIs within the limits of the
// smallest box, and keeps serving when the port or the listener fails.
package httpserve

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/playerd/internal/netlimit"
)

// Limits of the API listener, for the smallest box (Pi Zero 2 W: 512 MB for
// everything). An idle keep-alive connection costs about 20 KB: its server
// goroutine's stack (8 KB), the 4 KB read and 4 KB write buffers net/http
// keeps for the connection's life, and its state. Measured with `make
// bench-flood` before these limits: 10,000 held connections took playerd
// from 14 MB to 215 MB RSS (runtime/metrics: 105 MB heap objects, 83 MB
// stacks), and a status request waited up to 0.8 s. Memory also comes back
// late: a closed connection's buffers wait in net/http's pools until the
// second garbage collection, and an idle program collects every 2 minutes,
// so RSS was still 164 MB three minutes after the flood. Bounding the
// connections bounds both.
//
//   - MaxConns: 256 connections are about 5 MB. A household's clients (a
//     few browsers with up to 6 connections each, Home Assistant's pool, the
//     phone apps) need a fraction of that.
//   - MaxConnsPerClient: everything behind one address shares it: a
//     home-automation host and a browser behind a NAT or a reverse proxy
//     together. A browser opens at most 6 (the admin page's event stream
//     among them), Home Assistant holds its event stream and polls the
//     status, the cover and the screenshot (4), and other integrations and
//     scripts on the same host that open a new connection per request get
//     the rest: a burst of 32 with room to spare. Five clients can have
//     their full share at once (docs/api.md).
//   - MaxHeaderBytes: the request line and headers. Browsers send under
//     2 KB (the box sets no cookies); net/http's default would let every
//     connection buffer 1 MB.
//
// Timeouts: a LAN client sends its headers within milliseconds (5 s cuts off
// connections that trickle them); bodies are small JSON or bounded uploads (15 s);
// the largest answers (a cover, the screenshot) get 30 s over poor Wi-Fi.
// An idle connection is kept for 60 s: pollers (Home Assistant every 5 s,
// the web UI every second) keep theirs, a departed client's is gone within a
// minute, and under pressure the limiter gives idle ones up at once.
const (
	MaxConns          = 256
	MaxConnsPerClient = 48
	MaxHeaderBytes    = 16 << 10
)

// New returns an API's HTTP server; Limit puts each listener it serves
// under the limits above (Serve calls it again when it listens anew). The
// local API and the home-automation API (under TLS) are served alike.
func New(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         netlimit.ConnState,
		// An event stream reaches its socket through the context to size
		// its send buffer (netlimit.Conn), and a connection over the limit
		// is marked for its refusal.
		ConnContext: netlimit.ConnContext,
	}
}

func Limit(ln net.Listener) net.Listener {
	return netlimit.Wrap(ln, netlimit.Config{Total: MaxConns, PerClient: MaxConnsPerClient})
}

// Serve answers HTTP until ctx ends, on listeners that wrap makes of ln
// (the limits, TLS); ln may be nil when the first listen failed. When the
// port cannot be taken (another process still holds it) or the listener
// breaks, the daemons' one server (daemon.Server) listens again, with
// backoff, on the same address: gokrazy would restart playerd instead, but
// a restart stops the music and loses the position since the last save
// (docs/faults.md).
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, addr string, wrap func(net.Listener) net.Listener, log *slog.Logger) {
	s := &daemon.Server{HTTP: srv, Grace: 5 * time.Second, Log: log.With("listen", addr)}
	if ln != nil {
		addr = ln.Addr().String() // a port chosen by the system stays the same
		s.Listener = wrap(ln)
	}
	s.Listen = func() (net.Listener, error) {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		return wrap(l), nil
	}
	s.Run(ctx)
}

// Listen is the given listener (a test's), or one on addr; nil when addr
// cannot be taken now (logged: Serve tries again).
func Listen(given net.Listener, addr string, log *slog.Logger) net.Listener {
	if given != nil {
		return given
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Error("listen", "listen", addr, "error", err)
		return nil
	}
	return ln
}
