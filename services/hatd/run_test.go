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

	"github.com/storybox/storybox/services/hatd/internal/status"
)

func unixClient(sock string) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
}

func tryStatus(c *http.Client) (status.Status, error) {
	var st status.Status
	resp, err := c.Get("http://hatd/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// waitStatus polls hatd until cond holds. Requests may fail only while hatd
// is starting (no socket yet). The deadline only bounds a hang; run
// returning early ends the wait at once.
func waitStatus(t *testing.T, c *http.Client, done <-chan error, starting bool, what string, cond func(status.Status) bool) status.Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := tryStatus(c)
		if err == nil && cond(st) {
			return st
		}
		if err != nil && !starting {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		select {
		case runErr := <-done:
			t.Fatalf("waiting for %s: run returned %v", what, runErr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: last status %+v, error %v", what, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRunSimulated(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "hatd.sock") // directory does not exist yet
	// A stale socket from a crashed run must not stop the start.
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	cfg := DefaultConfig
	cfg.Sim, cfg.Socket, cfg.Interval, cfg.SimSpeed = true, sock, 100*time.Millisecond, 10
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.DiscardHandler)) }()

	c := unixClient(sock)
	st := waitStatus(t, c, done, true, "a battery level", func(st status.Status) bool {
		return st.BatteryPercent != nil && st.Level != nil
	})
	if !st.HardwareAvailable || *st.Level != "ok" || st.ChargerStatus == nil || *st.ChargerStatus != "not_charging" {
		t.Fatalf("status %+v", st)
	}
	if p := *st.BatteryPercent; p < 70 || p > 100 {
		t.Errorf("percent %d at SoC 0.8", p)
	}

	resp, err := c.Post("http://hatd/sim", "application/json", strings.NewReader(`{"soc":0.02}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /sim: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = c.Post("http://hatd/sim", "application/json", strings.NewReader(`{"soc":2}`))
	if err != nil {
		t.Fatalf("POST /sim: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"error"`) {
		t.Errorf("bad control: %d %s", resp.StatusCode, body)
	}
	waitStatus(t, c, done, false, "level critical", func(st status.Status) bool {
		return st.Level != nil && *st.Level == "critical"
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestNoBoardExits125(t *testing.T) {
	cfg := DefaultConfig
	cfg.Bus = 97 // no /dev/i2c-97 here or on a box
	cfg.Socket = filepath.Join(t.TempDir(), "s.sock")
	err := run(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "no battery board") {
		t.Fatalf("err = %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, args := range [][]string{
		{"-profile", "nope"},
		{"-interval", "1h"},
		{"-socket", ""},
		{"-sim-soc", "1.5"},
		{"-profile-file", "/nonexistent.json"},
		{"extra"},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	t.Setenv("HATD_PROFILE", "usb-only")
	c, err := parseFlags([]string{"-sim"})
	if err != nil || c.Profile != "usb-only" || !c.Sim {
		t.Errorf("env: %+v %v", c, err)
	}
}
