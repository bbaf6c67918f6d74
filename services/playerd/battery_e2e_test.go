package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

// TestBatteryEndToEnd runs the real hatd binary with its simulated board
// next to playerd: status through the API, hatd going away (503) and
// coming back, then a critical battery that makes playerd save its state
// and ask for the power-off.
func TestBatteryEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs hatd")
	}
	tmp, err := os.MkdirTemp("", "sbx") // short: Unix socket paths are capped near 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	hatdBin := filepath.Join(tmp, "hatd")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build hatd")
	}
	if out, err := exec.Command(goBin, "build", "-o", hatdBin, "github.com/storybox/storybox/services/hatd").CombinedOutput(); err != nil {
		t.Fatalf("build hatd: %v\n%s", err, out)
	}
	sock := filepath.Join(tmp, "run", "hatd.sock")
	startHatd := func() *exec.Cmd {
		cmd := exec.Command(hatdBin, "-sim", "-socket", sock, "-interval", "100ms", "-sim-soc", "0.6")
		cmd.Stderr = &testLog{t: t, prefix: "hatd: "}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	hatd := startHatd()
	t.Cleanup(func() { _ = hatd.Process.Kill(); _ = hatd.Wait() })

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	data := filepath.Join(tmp, "data")
	media := filepath.Join(tmp, "media")
	if err := os.MkdirAll(media, 0o755); err != nil {
		t.Fatal(err)
	}
	powerOff := make(chan state.Saved, 1)
	cfg := Config{Listen: addr, Listener: l, Media: media, Data: data, Output: "null", Hat: sock, Version: "test",
		PowerOff: func(context.Context) error {
			// By now the state must be on disk.
			var s state.Saved
			err := state.ReadJSON(filepath.Join(data, state.FileName), &s)
			if err != nil {
				t.Errorf("state at power-off: %v", err)
			}
			powerOff <- s
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		runErr <- run(ctx, cfg, slog.New(slog.NewTextHandler(&testLog{t: t, prefix: "playerd: "}, nil)))
	}()
	t.Cleanup(func() { cancel(); <-stopped })

	base := "http://" + addr
	get := func(path string) (int, map[string]any) {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	var hs map[string]any
	waitFor("battery status", func() bool {
		code, m := get("/api/hat/status")
		hs = m
		return code == 200 && m["battery_percent"] != nil && m["level"] == "ok"
	})
	if hs["hardware_available"] != true || hs["profile"] != "ansmann-2s1p" || hs["charger_status"] != "not_charging" {
		t.Errorf("/api/hat/status: %v", hs)
	}
	if p := hs["battery_percent"].(float64); p < 30 || p > 70 {
		t.Errorf("percent %v at 60 %% state of charge", p)
	}
	if code, m := get("/api/mupihat/status"); code != 200 || m["battery_voltage_mv"] == nil {
		t.Errorf("/api/mupihat/status: %d %v", code, m)
	}

	// Something worth saving: a volume change.
	resp, err := http.Post(base+"/api/command", "application/json", strings.NewReader(`{"action":"volume","value":7}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("volume: %v %v", resp, err)
	}
	resp.Body.Close()

	// hatd goes away: 503 with a JSON error, the rest of the API works.
	_ = hatd.Process.Signal(syscall.SIGTERM)
	_ = hatd.Wait()
	code, m := get("/api/hat/status")
	if code != http.StatusServiceUnavailable || m["error"] == nil {
		t.Errorf("hatd stopped: %d %v", code, m)
	}
	if code, _ := get("/api/status"); code != 200 {
		t.Errorf("/api/status while hatd is down: %d", code)
	}

	// hatd comes back: playerd recovers without help.
	hatd = startHatd()
	waitFor("recovery", func() bool { code, _ := get("/api/hat/status"); return code == 200 })

	// Drain the simulated pack: critical, state saved, power-off requested.
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	resp, err = hc.Post("http://hatd/sim", "application/json", strings.NewReader(`{"soc":0.02}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("drive sim: %v %v", resp, err)
	}
	resp.Body.Close()
	select {
	case s := <-powerOff:
		if s.Volume != 7 {
			t.Errorf("saved volume %d, want 7", s.Volume)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no power-off request")
	}
	select {
	case err := <-runErr:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("playerd did not stop after the power-off request")
	}
}

// testLog sends a process's log lines to t.Log, so they show with -v or on
// failure only.
type testLog struct {
	t      *testing.T
	prefix string
}

func (l *testLog) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.t.Log(l.prefix + line)
	}
	return len(p), nil
}

var _ io.Writer = (*testLog)(nil)
