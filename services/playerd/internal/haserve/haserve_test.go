package haserve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
)

func TestOffWithoutItsDirectoryAndListenerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A file where the data directory should be: the secrets cannot be kept.
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(data, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	core := newCore(t)
	s := Open(Config{Listener: ln, Data: data, Host: "box", ID: "b1", Core: core}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if s != nil {
		t.Fatal("the API is on without a place for its secrets")
	}
	if core.port != 0 {
		t.Error("an API that is off told the core it serves")
	}
	if _, err := ln.Accept(); err == nil {
		t.Error("the listener of an API that is off stays open")
	}
}

func TestPortIsTheListeners(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	core := newCore(t)
	s := Open(Config{Listen: ":8443", Listener: ln, Data: t.TempDir(), Host: "box", ID: "b1", Core: core}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if s == nil {
		t.Fatal("the API is off with a usable data directory")
	}
	if got, want := s.port(), ln.Addr().(*net.TCPAddr).Port; got != want {
		t.Errorf("port %d, want the listener's %d", got, want)
	}
	if core.port != s.port() || core.id == nil || core.id.Fingerprint() == "" {
		t.Errorf("the core (and so the admin page) is told port %d and identity %v, want %d", core.port, core.id, s.port())
	}
}

// fakeCore is the core's home-automation facet.
type fakeCore struct {
	pairing *pairing.Manager
	id      box.Identity
	port    int
}

func newCore(t *testing.T) *fakeCore {
	m, err := pairing.New(pairing.Config{File: filepath.Join(t.TempDir(), "clients.json"), DeviceID: "b1"})
	if err != nil {
		t.Fatal(err)
	}
	return &fakeCore{pairing: m}
}

func (c *fakeCore) Pairing() *pairing.Manager         { return c.pairing }
func (c *fakeCore) Serving(id box.Identity, port int) { c.id, c.port = id, port }

// panickyNetd fails its first announcement with a panic (a bug in the
// client, say) and keeps the second until ctx ends.
type panickyNetd struct {
	n     atomic.Int32
	calls chan struct{}
}

func (p *panickyNetd) KeepAnnounced(ctx context.Context, svc netapi.Service, _ time.Duration, report func(error)) {
	p.calls <- struct{}{}
	if p.n.Add(1) == 1 {
		panic("announcement broke")
	}
	report(nil)
	<-ctx.Done()
}

// The announcement is a part like the others: one that fails is started
// again, so Home Assistant still finds the box.
func TestAnnouncementRestarts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := Open(Config{Listener: ln, Data: t.TempDir(), Host: "box", ID: "b1", Core: newCore(t)}, log)
	if s == nil {
		t.Fatal("the API is off")
	}
	ctx, cancel := context.WithCancel(context.Background())
	sup := daemon.NewGroup(log)
	netd := &panickyNetd{calls: make(chan struct{}, 2)}
	s.Announce(ctx, sup, netd, log)
	for want := range 2 {
		select {
		case <-netd.calls:
		case <-time.After(20 * time.Second): // the first pause is a second
			t.Fatalf("announced %d times, want %d: a failed announcement was not started again", want, 2)
		}
	}
	cancel()
	sup.Wait()
}
