package ipconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const routes = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
	"eth0\t00000000\t0100000A\t0003\t0\t0\t1\t00000000\t0\t0\t0\n" +
	"wlan0\t00000000\t0101A8C0\t0003\t0\t0\t1024\t00000000\t0\t0\t0\n" +
	"wlan0\t00000000\t0201A8C0\t0003\t0\t0\t5\t00000000\t0\t0\t0\n" +
	"wlan0\t0001A8C0\t00000000\t0001\t0\t0\t5\t00FFFFFF\t0\t0\t0\n"

// The gateway is the default route through the interface with the lowest
// metric (gokrazy's dhcp demotes the routes of a link without carrier to
// 1024); other interfaces and subnet routes do not count. The table is in
// little-endian byte order, as this test's machines print it.
func TestGateway(t *testing.T) {
	if got := gateway(strings.NewReader(routes), "wlan0"); got != "192.168.1.2" {
		t.Errorf("wlan0 gateway %q", got)
	}
	if got := gateway(strings.NewReader(routes), "eth0"); got != "10.0.0.1" {
		t.Errorf("eth0 gateway %q", got)
	}
	if got := gateway(strings.NewReader(routes), "wlan1"); got != "" {
		t.Errorf("wlan1 gateway %q", got)
	}
}

// A client that exits is started again; Down stops it for good.
func TestClientRestartedUntilDown(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "runs")
	prog := filepath.Join(dir, "dhcp")
	// Exits at once, as gokrazy's dhcp does when no server answers.
	script := "#!/bin/sh\necho \"$1\" >>" + log + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &DHCP{Program: prog, RetryMax: time.Millisecond}
	d.Up("lo")
	d.Up("lo") // already running: no second client
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		if strings.Count(string(b), "-interface=lo\n") >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("client not restarted: %q", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.stop("lo")
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.running) != 0 {
		t.Errorf("still running: %v", d.running)
	}
}
