package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSyncthing is a program that answers --device-id with id and counts
// its runs in a file beside it, and reports the nice value it ran at.
func fakeSyncthing(t *testing.T, id string) (bin, runs, nice string) {
	dir := t.TempDir()
	bin, runs, nice = filepath.Join(dir, "syncthing"), filepath.Join(dir, "runs"), filepath.Join(dir, "nice")
	script := "#!/bin/sh\necho run >>" + runs + "\nawk '{print $19}' /proc/self/stat >" + nice + "\necho " + id + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, runs, nice
}

func countRuns(t *testing.T, runs string) int {
	b, err := os.ReadFile(runs)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "run")
}

// The id is asked once per certificate, at Syncthing's own low priority,
// and asked again when the certificate is another.
func TestDeviceIDAskedOncePerCertificate(t *testing.T) {
	const id = "CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC"
	bin, runs, nice := fakeSyncthing(t, id)
	home, cache := t.TempDir(), filepath.Join(t.TempDir(), "device-id")
	cert := filepath.Join(home, "cert.pem")
	if err := os.WriteFile(cert, []byte("first certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		got, err := deviceID(context.Background(), bin, home, cache)
		if err != nil || got != id {
			t.Fatalf("start %d: %q %v", i, got, err)
		}
	}
	if n := countRuns(t, runs); n != 1 {
		t.Errorf("three starts ran syncthing %d times, want 1", n)
	}
	if b, err := os.ReadFile(nice); err != nil || strings.TrimSpace(string(b)) != "19" {
		t.Errorf("syncthing ran at nice %q (%v), want 19", b, err)
	}

	if err := os.WriteFile(cert, []byte("another certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := deviceID(context.Background(), bin, home, cache); err != nil {
		t.Fatal(err)
	}
	if n := countRuns(t, runs); n != 2 {
		t.Errorf("a new certificate: %d runs, want 2", n)
	}

	// A cache that does not parse is asked again, never believed.
	if err := os.WriteFile(cache, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := deviceID(context.Background(), bin, home, cache); err != nil || got != id || countRuns(t, runs) != 3 {
		t.Errorf("a damaged cache: %q %v, %d runs", got, err, countRuns(t, runs))
	}
}

// An answer that is no device id is an error and is not cached.
func TestDeviceIDRefusesAnAnswerThatIsNone(t *testing.T) {
	bin, runs, _ := fakeSyncthing(t, "not-an-id")
	home, cache := t.TempDir(), filepath.Join(t.TempDir(), "device-id")
	if err := os.WriteFile(filepath.Join(home, "cert.pem"), []byte("c"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := deviceID(context.Background(), bin, home, cache); err == nil {
			t.Fatal("no error")
		}
	}
	if n := countRuns(t, runs); n != 2 {
		t.Errorf("%d runs, want 2 (nothing cached)", n)
	}
}
