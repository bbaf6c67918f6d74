package daemon

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// shortDir is a directory short enough for socket paths (t.TempDir's are
// long).
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "d")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// The one rule is the kernel's: a path of MaxSocketPath bytes can be
// listened on, CheckSocket refuses one byte more.
func TestSocketPathRule(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, strings.Repeat("s", MaxSocketPath-len(dir)-1))
	if len(path) != MaxSocketPath {
		t.Fatalf("path of %d bytes", len(path))
	}
	if err := CheckSocket("-socket", path); err != nil {
		t.Fatal(err)
	}
	l, err := Listen(path)
	if err != nil {
		t.Fatalf("the longest allowed path: %v", err)
	}
	l.Close()
	if err := CheckSocket("-socket", path+"s"); err == nil || !strings.Contains(err.Error(), "-socket") {
		t.Errorf("%d bytes: %v", len(path)+1, err)
	}
	if _, err := net.Listen("unix", path+"s"); err == nil {
		t.Error("the kernel took a path CheckSocket refuses")
	}
	for _, p := range []string{"", "run/x.sock"} {
		if CheckSocket("-socket", p) == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

func TestListen(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "a", "b.sock") // the directory does not exist yet
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("socket %v %v", fi, err)
	}
	go func(l net.Listener) {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}(l)
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Errorf("a socket that answers was taken: %v", err)
	}
	// A socket left behind by a crash is replaced.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	l, err = Listen(path)
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	l.Close()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(file); err == nil {
		t.Error("replaced a regular file")
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{First: time.Millisecond, Max: 3 * time.Millisecond}
	var got []time.Duration
	for range 4 {
		if !b.Wait(context.Background()) {
			t.Fatal("ended")
		}
		got = append(got, b.next)
	}
	if want := []time.Duration{2, 3, 3, 3}; !equalMS(got, want) {
		t.Errorf("next delays %v, want %v ms", got, want)
	}
	b.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b.Wait(ctx) {
		t.Error("waited past the end of ctx")
	}
	var zero Backoff
	if zero.first() != time.Second || zero.max() != 30*time.Second {
		t.Errorf("defaults %v %v", zero.first(), zero.max())
	}
}

func equalMS(got, want []time.Duration) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i]*time.Millisecond {
			return false
		}
	}
	return true
}

// syncBuffer is a log other goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func unixGet(t *testing.T, path, url string) (int, string, error) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
	resp, err := c.Get("http://d" + url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// waitServed asks until the server answers at all; the deadline only
// bounds a hang.
func waitServed(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; {
		if _, _, err := unixGet(t, path, "/"); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("never served")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })

// A socket another process still holds is taken over once it is free; the
// outage is logged once, and the recovery.
func TestServerRetriesListen(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	other, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{})
	go func() {
		// Answer the Server's check that the socket is in use, twice,
		// then go away.
		for range 2 {
			if c, err := other.Accept(); err == nil {
				c.Close()
			}
		}
		close(accepted)
	}()
	var log syncBuffer
	s := &Server{HTTP: &http.Server{Handler: okHandler}, Listen: func() (net.Listener, error) { return Listen(path) },
		Retry: Backoff{First: time.Millisecond, Max: 5 * time.Millisecond}, Log: slog.New(slog.NewTextHandler(&log, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	<-accepted
	other.Close()
	waitServed(t, path)
	cancel()
	<-done
	if n := strings.Count(log.String(), "cannot serve"); n != 1 {
		t.Errorf("outage logged %d times:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "serving again") {
		t.Errorf("recovery not logged:\n%s", log.String())
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// brokenListener fails its first Accept, as a listener whose descriptor
// went bad.
type brokenListener struct {
	net.Listener
	once sync.Once
}

var errBroken = errors.New("accept: bad file descriptor")

func (b *brokenListener) Accept() (net.Conn, error) {
	var broke bool
	b.once.Do(func() { broke = true })
	if broke {
		b.Listener.Close()
		return nil, errBroken
	}
	return b.Listener.Accept()
}

// A listener that breaks is made again: the first one given, then one
// from Listen.
func TestServerListensAgain(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	first, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	s := &Server{HTTP: &http.Server{Handler: okHandler}, Listener: &brokenListener{Listener: first},
		Listen: func() (net.Listener, error) { return Listen(path) },
		Retry:  Backoff{First: time.Millisecond}, Log: slog.New(slog.NewTextHandler(&log, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	waitServed(t, path)
	cancel()
	<-done
	if !strings.Contains(log.String(), errBroken.Error()) || !strings.Contains(log.String(), "serving again") {
		t.Errorf("log:\n%s", log.String())
	}
}

// The end of ctx lets a request in flight finish, then Run returns.
func TestServerGracefulStop(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	started, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ServeSocket(ctx, path, h, nil) }()
	got := make(chan string, 1)
	go func() {
		for {
			if _, body, err := unixGet(t, path, "/"); err == nil {
				got <- body
				return
			}
			select {
			case <-started:
				got <- "request failed after it started"
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	<-started
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned with a request in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if body := <-got; body != "finished" {
		t.Errorf("answer %q", body)
	}
	<-done
}
