package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/netapi"
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
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", cfg.Socket)
	}}}
	var st netapi.Status
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := c.Get("http://netd/status")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no status: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st.State != netapi.StateNoAdapter || st.KnownNetworks != 1 {
		t.Errorf("status %+v", st)
	}
	resp, err := c.Get("http://netd/networks")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"home"`) || strings.Contains(string(body), "correct horse") {
		t.Errorf("networks %s", body)
	}
	fi, err := os.Stat(filepath.Join(cfg.State, "networks.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("networks file %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(boot, "wifi.json")); !os.IsNotExist(err) {
		t.Errorf("wifi.json left in the boot directory: %v", err)
	}
	resp, err = c.Get("http://netd/scan")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("scan without an adapter: %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
