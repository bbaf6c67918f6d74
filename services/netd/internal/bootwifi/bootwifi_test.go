package bootwifi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/netd/internal/store"
)

func TestPickup(t *testing.T) {
	boot, state := t.TempDir(), t.TempDir()
	st, err := store.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(boot, FileName)
	if err := os.WriteFile(file, []byte(`{"ssid":"home","psk":"correct horse","country":"DE"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The card stays read-only: the network is taken over once all the same.
	failing := func(string) error { return errors.New("read-only file system") }
	res, err := Pickup(boot, state, st, failing)
	if err == nil || res.Imported != 1 || res.Removed {
		t.Fatalf("first pickup: %+v %v", res, err)
	}
	if n, ok := st.Lookup("home"); !ok || n.PSK != "correct horse" || st.Country() != "DE" {
		t.Fatalf("stored %+v %v country %q", n, ok, st.Country())
	}
	fi, err := os.Stat(filepath.Join(state, store.FileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("networks file %v %v", fi, err)
	}
	// Forgotten later, it does not come back from the same file.
	if err := st.Forget("home"); err != nil {
		t.Fatal(err)
	}
	if res, _ := Pickup(boot, state, st, failing); res.Imported != 0 {
		t.Errorf("re-imported: %+v", res)
	}
	if _, ok := st.Lookup("home"); ok {
		t.Error("a forgotten network came back")
	}
	// A new file is imported and removed.
	if err := os.WriteFile(file, []byte(`{"networks":[{"ssid":"cafe","priority":2}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Pickup(boot, state, st, os.Remove)
	if err != nil || res.Imported != 1 || !res.Removed {
		t.Fatalf("second file: %+v %v", res, err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Error("file left on the card")
	}
	// Bad files change nothing and do not quote the passphrase.
	if err := os.WriteFile(file, []byte(`{"ssid":"x","psk":"short"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Pickup(boot, state, st, os.Remove); err == nil {
		t.Error("a bad passphrase was accepted")
	}
	if err := os.WriteFile(file, []byte(`{"ssid":"x","psk":"secretsecret",`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Pickup(boot, state, st, os.Remove); err == nil || contains(err.Error(), "secretsecret") {
		t.Errorf("broken JSON: %v", err)
	}
	if len(st.Networks()) != 1 {
		t.Errorf("networks after bad files: %+v", len(st.Networks()))
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
