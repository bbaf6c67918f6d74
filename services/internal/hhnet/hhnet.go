// Package hhnet is a home network for household tests: network
// namespaces, one per box, joined by veth pairs to a bridge that lives in
// a namespace of its own, so that Syncthing never runs on the machine's
// own network. It also builds the syncthing program from the image's pin
// (gokrazy-instance/storybox/builddir/github.com/syncthing/syncthing), as
// gok builds it for the image. Tests only; needs root and iproute2.
package hhnet

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Require is the variable that turns a missing namespace or ip program
// into a failure instead of a skip (make test sets it).
const Require = "STORYBOX_REQUIRE_NETNS"

// Net is the bridge and the boxes' namespaces.
type Net struct {
	prefix string
	bridge string // the bridge's namespace
	mu     sync.Mutex
	boxes  []string
}

// Wanted skips a household test unless STORYBOX_HOUSEHOLD is set: the
// tests build Syncthing and run boxes for minutes, so `make
// test-household` runs them rather than every `go test`.
func Wanted(t testing.TB) {
	t.Helper()
	if os.Getenv("STORYBOX_HOUSEHOLD") == "" {
		t.Skip("make test-household runs it (STORYBOX_HOUSEHOLD=1): it builds Syncthing and runs boxes in network namespaces")
	}
}

// Limit makes box i's link to the bridge carry at most rate (tc's
// notation, e.g. "40mbit"), so that a transfer lasts long enough to be
// interrupted.
func (n *Net) Limit(i int, rate string) error {
	return run("tc", "-n", n.bridge, "qdisc", "replace", "dev", fmt.Sprintf("p%d", i), "root", "tbf", "rate", rate, "burst", "64kb", "latency", "200ms")
}

func run(name string, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// Prefix of every namespace these tests make; a run removes what an
// earlier, killed run left.
const Prefix = "sbxhh"

// New makes the bridge, or skips the test where namespaces cannot be made
// (not root, no ip), unless Require is set. Everything is removed when the
// test ends, failed or not.
func New(t testing.TB) *Net {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("network namespaces are Linux's")
	}
	if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
		if os.Getenv(Require) != "" {
			t.Fatalf("household tests need root and iproute2's ip (%v)", err)
		}
		t.Skipf("household tests need root and iproute2's ip; %s=1 makes this a failure", Require)
	}
	removeStale()
	n := &Net{prefix: fmt.Sprintf("%s%d", Prefix, os.Getpid()%100000)}
	n.bridge = n.prefix + "br"
	t.Cleanup(n.Close)
	if err := ip("netns", "add", n.bridge); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-n", n.bridge, "link", "add", "br0", "type", "bridge"},
		{"-n", n.bridge, "link", "set", "br0", "up"},
		{"-n", n.bridge, "link", "set", "lo", "up"},
	} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// removeStale removes the namespaces of runs that ended without cleaning
// up (a kill -9 of the test binary). A namespace whose run is still alive
// (another test binary on the same machine) is left to it: deleting it cut
// that run's boxes off each other mid-test.
func removeStale() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	alive := liveRuns()
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if run, ok := runOf(name); ok && !alive[run] {
			_ = ip("netns", "del", name)
		}
	}
}

// runOf is the run number in a namespace's name (New's prefix: the test
// binary's pid modulo 100000).
func runOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(rest[:end])
	return n, err == nil
}

// liveRuns are the run numbers of the processes alive now.
func liveRuns() map[int]bool {
	alive := map[int]bool{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			alive[pid%100000] = true
		}
	}
	return alive
}

// Box makes the namespace of box i (1–250) with address 10.88.0.i/24 on
// its eth0, and returns the namespace's name.
func (n *Net) Box(t testing.TB, i int) string {
	t.Helper()
	ns := fmt.Sprintf("%sb%d", n.prefix, i)
	n.mu.Lock()
	n.boxes = append(n.boxes, ns)
	n.mu.Unlock()
	peer := fmt.Sprintf("p%d", i)
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", peer, "netns", n.bridge},
		{"-n", ns, "addr", "add", fmt.Sprintf("10.88.0.%d/24", i), "dev", "eth0"},
		{"-n", ns, "link", "set", "eth0", "multicast", "on"},
		{"-n", ns, "link", "set", "eth0", "up"},
		{"-n", n.bridge, "link", "set", peer, "master", "br0"},
		{"-n", n.bridge, "link", "set", peer, "up"},
	} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// Addr is box i's address.
func Addr(i int) string { return fmt.Sprintf("10.88.0.%d", i) }

// Link takes box i's link to the bridge down or up: the box is cut off
// from the others, as when its Wi-Fi drops.
func (n *Net) Link(i int, up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	return ip("-n", n.bridge, "link", "set", fmt.Sprintf("p%d", i), state)
}

// Close removes every namespace; their processes must have ended.
func (n *Net) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ns := range n.boxes {
		_ = ip("netns", "del", ns)
	}
	_ = ip("netns", "del", n.bridge)
	n.boxes = nil
}

// Command is name with args run in namespace ns.
func Command(ns, name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns, name}, args...)...)
}

func ip(args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.Command("ip", args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// Syncthing builds the syncthing program from the image's pin into dir
// (the Go build cache makes a second build quick) and returns its path.
// STORYBOX_SYNCTHING names one already built instead.
func Syncthing(t testing.TB, dir string) string {
	t.Helper()
	if p := os.Getenv("STORYBOX_SYNCTHING"); p != "" {
		return p
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pin := filepath.Join(root, "gokrazy-instance/storybox/builddir/github.com/syncthing/syncthing")
	out := filepath.Join(dir, "syncthing")
	cmd := exec.Command("go", "build", "-tags=noassets", "-ldflags=-X github.com/syncthing/syncthing/lib/build.Version=v1.30.0", "-o", out, "github.com/syncthing/syncthing/cmd/syncthing")
	cmd.Dir = pin
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building syncthing from %s: %v\n%s", pin, err, b)
	}
	return out
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not in the storybox module")
	}
	return filepath.Dir(mod), nil
}

// Dial connects to addr from inside namespace ns: the socket is made on a
// thread moved into ns for the call, and keeps that namespace after the
// thread is moved back. A test reaches a box's loopback this way.
func Dial(ns, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	res := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// The thread stays locked when moving back fails: it ends
		// with the goroutine rather than run other code in ns.
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			res <- result{nil, err}
			return
		}
		defer self.Close()
		target, err := os.Open(filepath.Join("/var/run/netns", ns))
		if err != nil {
			res <- result{nil, err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			res <- result{nil, fmt.Errorf("setns %s: %w", ns, err)}
			return
		}
		c, err := net.DialTimeout(network, addr, 5*time.Second)
		if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		res <- result{c, err}
	}()
	r := <-res
	return r.c, r.err
}

// SyncthingTemp is the temporary file Syncthing receives name into, in dir.
func SyncthingTemp(dir, name string) string {
	return filepath.Join(dir, ".syncthing."+name+".tmp")
}

// Received is how many bytes of Syncthing's temporary file at path are on
// disk. Syncthing makes the file at its full size at once, sparse, and
// fills in blocks as they arrive: the size tells nothing of progress, the
// allocated blocks do. ok is false while there is no such file.
func Received(path string) (n int64, ok bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, false
	}
	return st.Blocks * 512, true
}
