package httpserve

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// brokenListener fails Accept for good, as a listener whose socket broke.
type brokenListener struct{ net.Listener }

func (l brokenListener) Accept() (net.Conn, error) {
	l.Listener.Close()
	return nil, errors.New("accept: socket broke")
}

// A listener that breaks is replaced on the same address, and a port that
// is taken is retried until it is free: the API comes back by itself.
func TestServeListensAgain(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(ctx, srv, brokenListener{ln}, addr, Limit, slog.New(slog.DiscardHandler))
	}()
	eventually(t, "the API on a new listener", func() bool {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	cancel()
	srv.Close()
	<-done

	// The port is held by someone else at start.
	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = holder.Addr().String()
	srv = &http.Server{Handler: srv.Handler}
	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() { defer close(done); Serve(ctx, srv, nil, addr, Limit, slog.New(slog.DiscardHandler)) }()
	holder.Close()
	eventually(t, "the API once the port is free", func() bool {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	cancel()
	_ = srv.Shutdown(context.Background())
	<-done
}

// eventually polls ok until it holds; the deadline only bounds a hang.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
