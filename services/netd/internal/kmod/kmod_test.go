package kmod

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// The Pi kernel's own table (gokrazy/kernel.rpi, 6.12.47-v8), abridged.
const dep = `kernel/drivers/net/wireless/broadcom/brcm80211/brcmutil/brcmutil.ko:
kernel/drivers/net/wireless/broadcom/brcm80211/brcmfmac/brcmfmac.ko: kernel/drivers/net/wireless/broadcom/brcm80211/brcmutil/brcmutil.ko
kernel/drivers/net/wireless/broadcom/brcm80211/brcmfmac/cyw/brcmfmac-cyw.ko: kernel/drivers/net/wireless/broadcom/brcm80211/brcmfmac/brcmfmac.ko kernel/drivers/net/wireless/broadcom/brcm80211/brcmutil/brcmutil.ko
`

func TestLoadOrder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "modules.dep"), []byte(dep), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "modules.builtin"), []byte("kernel/net/wireless/cfg80211.ko\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var loaded []string
	l := &Loader{Dir: dir, load: func(p string) error {
		loaded = append(loaded, filepath.Base(p))
		if filepath.Base(p) == "brcmutil.ko" {
			return unix.EEXIST // loaded already: fine
		}
		return nil
	}}
	if err := l.Load("cfg80211", "brcmfmac_cyw", "brcmfmac"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"brcmutil.ko", "brcmfmac.ko", "brcmfmac-cyw.ko"}; !slices.Equal(loaded, want) {
		t.Errorf("loaded %v, want %v", loaded, want)
	}
	if err := l.Load("nosuch"); err == nil {
		t.Error("an unknown module was accepted")
	}
	l.load = func(string) error { return unix.ENOEXEC }
	if err := (&Loader{Dir: dir, load: l.load}).Load("brcmutil"); !errors.Is(err, unix.ENOEXEC) {
		t.Errorf("a failing load: %v", err)
	}
}
