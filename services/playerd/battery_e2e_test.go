package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
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
	tmp := shortTemp(t)
	bin := buildHatd(t, tmp)
	sock := filepath.Join(tmp, "run", "hatd.sock")
	startSim := func() *exec.Cmd {
		return startHatd(t, bin, "-sim", "-socket", sock, "-interval", "100ms", "-sim-soc", "0.6")
	}
	hatd := startSim()
	data := filepath.Join(tmp, "data")
	powerOff := make(chan state.Saved, 1)
	base, _ := startBoxWith(t, t.TempDir(), data, func(c *setup) {
		c.Hat = sock
		c.powerOff = func(context.Context) error {
			// By now the state must be on disk.
			var s state.Saved
			err := state.ReadJSON(filepath.Join(data, state.FileName), &s)
			if err != nil {
				t.Errorf("state at power-off: %v", err)
			}
			powerOff <- s
			return nil
		}
	})
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
	waitFor := func(what string, ok func() bool) { t.Helper(); waitUntil(t, what, 20*time.Second, ok) }

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
	startSim()
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
	// playerd stops once the state is saved and the power is switched:
	// its API is gone.
	waitFor("playerd to stop", func() bool {
		resp, err := http.Get(base + "/api/health")
		if err == nil {
			resp.Body.Close()
		}
		return err != nil
	})
}
