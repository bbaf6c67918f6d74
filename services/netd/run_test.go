package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/daemon/daemontest"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/netd/internal/ipconf"
	"github.com/storybox/storybox/services/netd/internal/radio"
	"github.com/storybox/storybox/services/netd/internal/station"
	"github.com/storybox/storybox/services/netd/internal/store"
)

func TestConfigUnusableExits125(t *testing.T) {
	for _, args := range [][]string{
		{"-socket", ""},
		{"-socket", "netd.sock"},
		{"-state", "relative"},
		{"-dhcp", "dhcp"},
		{"-country", "Germany"},
		{"-http-port", "0"},
		{"-retry-max", "1ms"},
		{"-hostname", "my.box"},
		{"-modules", "../evil"},
		{"-mount-boot", "/a", "-boot-dir", "/b"},
		{"extra"},
	} {
		if code := daemon.Start(context.Background(), program, args, io.Discard); code != daemon.ExitNoRestart {
			t.Errorf("%v: exit %d, want %d", args, code, daemon.ExitNoRestart)
		}
	}
	if c, err := daemon.Parse(program, []string{"-country", "DE", "-hostname", "kinderzimmer"}, io.Discard); err != nil || c.Validate() != nil {
		t.Errorf("good flags: %+v %v %v", c, err, c.Validate())
	}
	// A malformed value in the environment is an error, not the default
	// (netd fell back to the default before).
	t.Setenv("NETD_MDNS", "no")
	if code := daemon.Start(context.Background(), program, nil, io.Discard); code != daemon.ExitNoRestart {
		t.Errorf("NETD_MDNS=no: exit %d", code)
	}
}

// netd comes up and answers on its socket whatever the machine's Wi-Fi;
// a boot-partition wifi.json becomes a known network with mode 0600.
func TestRunServes(t *testing.T) {
	dir, err := os.MkdirTemp("", "netd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	boot := filepath.Join(dir, "boot")
	if err := os.MkdirAll(boot, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(boot, "wifi.json"), []byte(`{"ssid":"home","psk":"correct horse"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig
	cfg.Socket, cfg.State, cfg.BootDir, cfg.MDNS = filepath.Join(dir, "n.sock"), filepath.Join(dir, "state"), boot, false
	cfg.DHCP = filepath.Join(dir, "no-dhcp")
	cfg.Interface = "storybox-test0" // no such interface: the host's own Wi-Fi stays untouched
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.DiscardHandler)) }()
	c := daemon.NewClient(cfg.Socket, "netd", "netd unavailable")
	call := func(method, path string, in, out any) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return c.Call(ctx, method, path, in, out)
	}
	var st netapi.Status
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err = call("GET", "/status", nil, &st); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no status: %v", err)
		}
	}
	if st.State != netapi.StateNoAdapter || st.KnownNetworks != 1 {
		t.Errorf("status %+v", st)
	}
	var known json.RawMessage
	if err := call("GET", "/networks", nil, &known); err != nil || !strings.Contains(string(known), `"home"`) || strings.Contains(string(known), "correct horse") {
		t.Errorf("networks %s %v", known, err)
	}
	fi, err := os.Stat(filepath.Join(cfg.State, "networks.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("networks file %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(boot, "wifi.json")); !os.IsNotExist(err) {
		t.Errorf("wifi.json left in the boot directory: %v", err)
	}
	if err := call("GET", "/scan", nil, nil); fault.KindOf(err) != fault.Conflict {
		t.Errorf("scan without an adapter: %v", err)
	}
	// With -mdns=false there is no responder to announce with.
	svc := netapi.Service{Name: "storybox", Type: "_mupibox._tcp", Port: 8443}
	if err := call("PUT", "/mdns/services", svc, nil); fault.KindOf(err) != fault.Conflict || !strings.Contains(err.Error(), "-mdns=false") {
		t.Errorf("announcement with mDNS off: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// panicRadio is no Wi-Fi, except that its first look for adapters panics,
// as a bug on an unexpected answer of a driver would.
type panicRadio struct {
	radio.None
	looks atomic.Int32
	again chan struct{} // closed at the first look after the panic
}

func (r *panicRadio) Adapters() ([]radio.Adapter, error) {
	switch r.looks.Add(1) {
	case 1:
		panic("unexpected adapter list")
	case 2:
		close(r.again)
	}
	return nil, nil
}

// noAddressing is addressing that is never asked for (no adapter).
type noAddressing struct{}

func (noAddressing) Up(string)                {}
func (noAddressing) Down(string) error        { return nil }
func (noAddressing) Addrs(string) ipconf.Addr { return ipconf.Addr{} }

// A part that fails is logged and started again while the others go on:
// the station panics on its first look for an adapter, and looks again
// after the pause; the socket answers throughout. Cancelling ends every
// part and removes the socket.
func TestPartsRestartAndStop(t *testing.T) {
	dir, err := os.MkdirTemp("", "netd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	st, err := store.Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig
	cfg.Socket, cfg.MDNS = filepath.Join(dir, "n.sock"), false
	events := daemontest.NewLog()
	r := &panicRadio{again: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(ctx, cfg, station.Config{Radio: r, Store: st, Addr: noAddressing{}}, events.Logger())
	}()
	events.Wait("station failed, restarting")
	<-r.again
	c := daemon.NewClient(cfg.Socket, "netd", "netd unavailable")
	var status netapi.Status
	for {
		// The socket may not be made yet; the station's restart is what
		// this waits for, the loop only for the socket's first answer.
		err := c.Call(ctx, "GET", "/status", nil, &status)
		if err == nil {
			break
		}
		events.Wait("serving")
	}
	if status.State != netapi.StateNoAdapter {
		t.Errorf("status after the restart: %+v", status)
	}
	cancel()
	<-done
	if _, err := os.Stat(cfg.Socket); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}
