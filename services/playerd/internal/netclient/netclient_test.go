package netclient

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
)

// fakeNetd keeps announcements the way netd's socket does; forget is a
// netd restart, off its -mdns=false.
type fakeNetd struct {
	mu        sync.Mutex
	announced map[string]netapi.Service
	puts      int
	off       bool
	withdrawn chan string
	changed   chan struct{}
}

func startFakeNetd(t *testing.T) (*fakeNetd, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "nc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &fakeNetd{announced: map[string]netapi.Service{}, withdrawn: make(chan string, 1), changed: make(chan struct{}, 100)}
	socket := daemon.Socket(nil)
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /mdns/services", func(w http.ResponseWriter, r *http.Request) {
		var s netapi.Service
		err := socket.Decode(r, &s)
		f.mu.Lock()
		f.puts++
		if err == nil && f.off {
			err = fault.New(fault.Conflict, "mDNS is off")
		}
		if err == nil {
			f.announced[s.Type] = s
		}
		f.mu.Unlock()
		f.changed <- struct{}{}
		socket.Answer(w, r, s, err)
	})
	mux.HandleFunc("DELETE /mdns/services/{type}", func(w http.ResponseWriter, r *http.Request) {
		f.withdrawn <- r.PathValue("type")
		answer.JSON(w, http.StatusOK, map[string]bool{"withdrawn": true})
	})
	sock := filepath.Join(dir, "n.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); daemon.ServeSocket(ctx, sock, daemon.Handler(socket, mux), nil) }()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake netd never served")
		}
	}
	return f, sock
}

// waitFor waits for cond after each request netd gets; the deadline only
// bounds a hang.
func (f *fakeNetd) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		f.mu.Lock()
		ok := cond()
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-f.changed:
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestKeepAnnounced(t *testing.T) {
	f, sock := startFakeNetd(t)
	svc := netapi.Service{Name: "storybox", Type: "_mupibox._tcp", Port: 8443, Text: map[string]string{"device_id": "abc"}}
	reports := make(chan error, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		New(sock).KeepAnnounced(ctx, svc, 5*time.Millisecond, func(err error) { reports <- err })
	}()
	f.waitFor(t, "the announcement", func() bool { return f.announced[svc.Type].Text["device_id"] == "abc" })
	if err := <-reports; err != nil {
		t.Fatalf("first report %v", err)
	}
	// netd restarts and has forgotten it: announced again.
	f.mu.Lock()
	clear(f.announced)
	f.mu.Unlock()
	f.waitFor(t, "the announcement again", func() bool { return f.announced[svc.Type].Port == 8443 })
	// netd refuses: reported once, however often tried.
	f.mu.Lock()
	f.off = true
	from := f.puts
	f.mu.Unlock()
	f.waitFor(t, "three refused attempts", func() bool { return f.puts >= from+3 })
	if err := <-reports; fault.KindOf(err) != fault.Conflict {
		t.Errorf("refusal reported as %v", err)
	}
	f.mu.Lock()
	f.off = false
	clear(f.announced)
	f.mu.Unlock()
	f.waitFor(t, "the announcement after the refusals", func() bool { return f.announced[svc.Type].Port == 8443 })
	if err := <-reports; err != nil {
		t.Errorf("recovery reported as %v", err)
	}
	if len(reports) != 0 {
		t.Errorf("%d more reports, e.g. %v", len(reports), <-reports)
	}
	cancel()
	<-done
	if typ := <-f.withdrawn; typ != svc.Type {
		t.Errorf("withdrew %q", typ)
	}
}

func TestAnnounceWithoutNetd(t *testing.T) {
	c := New(filepath.Join(t.TempDir(), "none.sock"))
	err := c.Announce(context.Background(), netapi.Service{Name: "x", Type: "_x._tcp", Port: 1})
	if fault.KindOf(err) != fault.Unavailable || fault.Message(err) != ErrUnavailable.Msg {
		t.Errorf("%v", err)
	}
}
