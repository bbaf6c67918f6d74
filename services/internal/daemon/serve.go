package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// MaxSocketPath is the longest Unix socket path Linux takes: sun_path is
// 108 bytes with the terminating NUL.
const MaxSocketPath = 107

// CheckSocket is the one rule for a socket path flag: absolute (a relative
// path would depend on the directory gokrazy starts a program in) and
// short enough for a Unix socket address.
func CheckSocket(flagName, path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s %q: want an absolute path", flagName, path)
	}
	if len(path) > MaxSocketPath {
		return fmt.Errorf("%s %q: %d bytes, longer than a Unix socket path may be (%d)", flagName, path, len(path), MaxSocketPath)
	}
	return nil
}

// Listen listens on the Unix socket at path, for root and its group only.
// It creates the socket's directory and removes a socket that a previous
// run left behind; a socket that still answers belongs to a running
// process and is left alone (an error: Server tries again).
func Listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another process is serving on it", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		l.Close()
		return nil, fmt.Errorf("socket permissions: %w", err)
	}
	return l, nil
}

// Backoff spaces out attempts: First (default 1 s), doubling up to Max
// (default 30 s). The zero value is ready to use.
type Backoff struct {
	First, Max time.Duration
	next       time.Duration
}

// Wait sleeps for the next delay; false when ctx ended first.
func (b *Backoff) Wait(ctx context.Context) bool {
	if b.next == 0 {
		b.next = b.first()
	}
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(2*b.next, b.max())
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Reset starts again at First, after a success.
func (b *Backoff) Reset() { b.next = 0 }

func (b *Backoff) first() time.Duration {
	if b.First > 0 {
		return b.First
	}
	return time.Second
}

func (b *Backoff) max() time.Duration {
	if b.Max > 0 {
		return max(b.Max, b.first())
	}
	return max(30*time.Second, b.first())
}

// Server serves HTTP and survives its listener: when the listener cannot
// be made (another process still holds the port or socket) or breaks, it
// makes it again, with Backoff, instead of ending the program, which
// gokrazy would restart every second (docs/faults.md).
type Server struct {
	HTTP *http.Server
	// Listen makes the listener: at the start unless Listener is set, and
	// after every failure. Required.
	Listen func() (net.Listener, error)
	// Listener, when set, is served first: one main made itself, to log
	// its address, or a test's.
	Listener net.Listener
	// Grace is how long requests in flight get once ctx ends; default 3 s.
	Grace time.Duration
	// Retry spaces out the attempts to listen again.
	Retry Backoff
	Log   *slog.Logger
}

// Run serves until ctx ends, then shuts the server down, waiting up to
// Grace for requests in flight. It logs the first failure of an outage and
// the recovery, not every attempt.
func (s *Server) Run(ctx context.Context) {
	log := s.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	grace := s.Grace
	if grace <= 0 {
		grace = 3 * time.Second
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		_ = s.HTTP.Shutdown(sctx)
	}()
	defer func() { <-stopped }()

	ln, failing := s.Listener, false
	for ctx.Err() == nil {
		if ln == nil {
			var err error
			if ln, err = s.Listen(); err != nil {
				if !failing {
					log.Error("cannot serve, trying again", "error", err)
					failing = true
				}
				if !s.Retry.Wait(ctx) {
					return
				}
				continue
			}
			if failing {
				log.Info("serving again", "addr", ln.Addr().String())
			} else if s.Listener == nil {
				log.Info("serving", "addr", ln.Addr().String())
			}
		}
		failing = false
		s.Retry.Reset()
		err := s.HTTP.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) || ctx.Err() != nil {
			return
		}
		log.Error("server stopped, serving again", "error", err)
		failing, ln = true, nil
	}
}

// ServeSocket serves h on the Unix socket at path until ctx ends: a
// daemon's socket.
func ServeSocket(ctx context.Context, path string, h http.Handler, log *slog.Logger) {
	s := &Server{
		HTTP:   &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second},
		Listen: func() (net.Listener, error) { return Listen(path) },
		Log:    log,
	}
	s.Run(ctx)
}
