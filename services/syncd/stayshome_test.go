package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/storybox/storybox/services/internal/hhnet"
)

// restClient reaches box b's Syncthing REST API on b's own loopback.
func restClient(b *box) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return hhnet.Dial(b.ns, network, addr)
	}}}
}

func apiKeyOf(t *testing.T, b *box) string {
	t.Helper()
	path := filepath.Join(b.dir, "state", "apikey")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("API key mode %v, want 0600", fi.Mode().Perm())
	}
	key, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(key))
}

// checkStaysHome: the configuration Syncthing runs with has every way
// beyond the household's boxes off; its REST API answers on the box's
// loopback only, and only with the key, which syncd never logs; it runs
// at nice 19 in the idle I/O class with GOMEMLIMIT set.
func checkStaysHome(t *testing.T, a, b *box) {
	t.Helper()
	key := apiKeyOf(t, a)
	if strings.Contains(a.log.String(), key) {
		t.Error("the API key is in syncd's log")
	}
	c := restClient(a)
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:8384/rest/config", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("REST API without the key: %s", resp.Status)
	}
	req.Header.Set("X-API-Key", key)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Options map[string]any `json:"options"`
		Devices []struct {
			ID string `json:"deviceID"`
		} `json:"devices"`
	}
	err = json.NewDecoder(resp.Body).Decode(&cfg)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"globalAnnounceEnabled": false, "localAnnounceEnabled": false, "relaysEnabled": false,
		"natEnabled": false, "urAccepted": float64(-1), "crashReportingEnabled": false,
		"autoUpgradeIntervalH": float64(0), "startBrowser": false,
	} {
		if got := cfg.Options[k]; got != want {
			t.Errorf("options.%s = %v, want %v", k, got, want)
		}
	}
	if l := fmt.Sprint(cfg.Options["listenAddresses"]); l != "[tcp://:22000]" {
		t.Errorf("listenAddresses = %s, want TCP alone (no QUIC, hence no STUN; no relay)", l)
	}
	if len(cfg.Devices) != 2 {
		t.Errorf("devices %v, want this box and the one added", cfg.Devices)
	}
	// Not from the other box.
	if conn, err := hhnet.Dial(b.ns, "tcp", hhnet.Addr(a.i)+":8384"); err == nil {
		conn.Close()
		t.Error("box A's REST API answers box B")
	}

	pid := syncthingPID(t, a)
	if n, err := unix.Getpriority(unix.PRIO_PROCESS, pid); err != nil || 20-n != 19 {
		// getpriority(2)'s raw call answers 20-nice.
		t.Errorf("syncthing's nice: %d %v, want 19", 20-n, err)
	}
	prio, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, 1, uintptr(pid), 0)
	if e != 0 || prio>>13 != 3 {
		t.Errorf("syncthing's I/O class %d (%v), want 3 (idle)", prio>>13, e)
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil || !strings.Contains(string(env), "\x00GOMEMLIMIT=") && !strings.HasPrefix(string(env), "GOMEMLIMIT=") {
		t.Errorf("syncthing runs without GOMEMLIMIT (%v)", err)
	}
}

// syncthingPID finds box b's Syncthing by its home directory.
func syncthingPID(t *testing.T, b *box) int {
	t.Helper()
	home := "--home=" + filepath.Join(b.dir, "state", "syncthing")
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if len(args) > 2 && args[1] == "serve" && strings.Contains(string(cmd), home+"\x00") {
			return pid
		}
	}
	t.Fatalf("no syncthing with %s", home)
	return 0
}

// rss is a process's resident memory in KiB.
func rss(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}
