// Package dbustest starts a private D-Bus session bus (Debian's
// dbus-daemon) for tests, so they never touch the desktop's own.
package dbustest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Need returns the path of each program, and skips the test when one is
// missing, except under CI (CI set) or `make test-mpris`
// (STORYBOX_REQUIRE_DBUS set), which install them: there a missing one is
// a failure.
func Need(t testing.TB, programs ...string) []string {
	t.Helper()
	var paths []string
	for _, p := range programs {
		path, err := exec.LookPath(p)
		if err != nil {
			if os.Getenv("CI") != "" || os.Getenv("STORYBOX_REQUIRE_DBUS") != "" {
				t.Fatalf("%s is missing; make test installs it (Debian packages dbus, playerctl)", p)
			}
			t.Skipf("%s is missing (Debian packages dbus, playerctl; make test installs them)", p)
		}
		paths = append(paths, path)
	}
	return paths
}

// Start runs a session bus of its own for the test and returns its
// address; the bus stops when the test ends.
func Start(t testing.TB) string {
	t.Helper()
	addr, _ := StartStoppable(t)
	return addr
}

// StartStoppable is Start with a stop function for a test that takes the
// bus away early.
func StartStoppable(t testing.TB) (addr string, stop func()) {
	t.Helper()
	daemon := Need(t, "dbus-daemon")[0]
	sock := filepath.Join(t.TempDir(), "bus")
	cmd := exec.Command(daemon, "--session", "--nofork", "--nopidfile", "--print-address", "--address=unix:path="+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Its complaints (it cannot raise its file limit unprivileged) matter
	// only when a test failed.
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("dbus-daemon: %s", stderr.String())
		}
	})
	// The address is printed once the bus listens.
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon: %v", err)
	}
	return strings.TrimSpace(line), stop
}
