package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Faults playerd survives in-process instead of exiting (docs/faults.md):
// gokrazy would restart it, but a restart stops the music, loses the
// position since the last save and, for a fault that persists, repeats
// every second.

// backoff waits between attempts: 1 s, doubling up to max.
type backoff struct {
	next, max time.Duration
}

func newBackoff(max time.Duration) *backoff { return &backoff{next: time.Second, max: max} }

// wait sleeps for the next delay; false when ctx ended first.
func (b *backoff) wait(ctx context.Context) bool {
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(2*b.next, b.max)
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// serve answers HTTP until ctx ends. When the port cannot be taken (another
// process still holds it) or the listener breaks, it listens again, with
// backoff, on the same address; ln may be nil when the first listen failed.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, addr string, log *slog.Logger) {
	var bo *backoff
	for {
		if ln == nil {
			var err error
			if ln, err = net.Listen("tcp", addr); err != nil {
				if bo == nil {
					log.Error("cannot listen, retrying", "error", err)
					bo = newBackoff(30 * time.Second)
				}
				if !bo.wait(ctx) {
					return
				}
				continue
			}
			if bo != nil {
				log.Info("listening again", "listen", ln.Addr().String())
			}
		}
		bo = nil
		addr = ln.Addr().String() // a port chosen by the system stays the same
		err := srv.Serve(limit(ln))
		if errors.Is(err, http.ErrServerClosed) || ctx.Err() != nil {
			return
		}
		log.Error("http server stopped, listening again", "error", err)
		ln = nil
	}
}

// scanUntilDone repeats a library scan that failed at start (the media
// directory missing or unreadable, say, on a card being replaced) until one
// completes, so the library comes back without a restart.
func (a *app) scanUntilDone(ctx context.Context) {
	bo := newBackoff(5 * time.Minute)
	for !a.lib.Scanned() && bo.wait(ctx) {
		if stats, err := a.lib.Scan(); err == nil || a.lib.Scanned() {
			a.log.Info("library scanned after all", "folders", stats.Folders, "tracks", stats.Tracks)
			return
		}
	}
}
