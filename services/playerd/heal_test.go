package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
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
		serve(ctx, srv, brokenListener{ln}, addr, limit, slog.New(slog.DiscardHandler))
	}()
	waitUntil(t, "the API on a new listener", 10*time.Second, func() bool {
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
	go func() { defer close(done); serve(ctx, srv, nil, addr, limit, slog.New(slog.DiscardHandler)) }()
	holder.Close()
	waitUntil(t, "the API once the port is free", 10*time.Second, func() bool {
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

// A library scan that fails at start (no media directory yet) is repeated
// until it succeeds, without a restart.
func TestScanRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the first retry (1 s)")
	}
	media := t.TempDir() + "/media" // not there yet
	base, _ := startBoxWith(t, media, t.TempDir(), func(c *setup) { c.scanning = true })
	info := getJSON[map[string]any](t, base+"/api/info")
	if lib := jsonObj(info["library"]); lib["scanned"] != false {
		t.Fatalf("library before the media directory exists: %v", lib)
	}
	// The directory appears at once, as a card that is mounted late would.
	if err := os.Rename(mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {2, 2}}), media); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the library", 20*time.Second, func() bool {
		return len(getJSON[[]map[string]any](t, base+"/api/library")) == 1
	})
}
