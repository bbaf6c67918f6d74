//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/storybox/storybox/services/internal/netapi"
)

// The second boot runs the Raspberry Pi's own kernel (kernel.rpi, which has
// no mac80211 and so no virtual radios) with the image's /lib/modules tree
// and the /lib/firmware files the image ships. It checks what the Pi will
// do before any chip answers: netd loads brcmfmac with the image's own
// -modules flag, and the kernel takes the country from the regulatory
// database only after netd has it reloaded, because cfg80211 is built in
// and looked for the file at boot, before the root file system was there.

// piModuleFlag is the -modules flag of gokrazy-instance/storybox/config.json.
const piModuleFlag = "-modules=brcmfmac,brcmfmac-cyw?"

func (t *test) setupPi() error {
	// As on the box: the files arrive after cfg80211 looked for them.
	ents, err := os.ReadDir("/firmware-later")
	if err != nil {
		return err
	}
	if err := os.MkdirAll("/lib/firmware", 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.Rename(filepath.Join("/firmware-later", e.Name()), filepath.Join("/lib/firmware", e.Name())); err != nil {
			return err
		}
	}
	return t.startNetd(piModuleFlag)
}

// piModules: brcmfmac and the Cypress vendor module it names are loaded
// (with brcmutil before them), and netd, finding no chip, reports so.
func (t *test) piModules() (string, error) {
	for _, m := range []string{"brcmutil", "brcmfmac", "brcmfmac_cyw"} {
		if err := waitFor("/sys/module/"+m, 30*time.Second); err != nil {
			return "", fmt.Errorf("module %s not loaded: %w", m, err)
		}
	}
	st, err := t.waitStatus("the status", 5*time.Second, func(netapi.Status) bool { return true })
	if err != nil {
		return "", err
	}
	if st.State != netapi.StateNoAdapter {
		return "", errors.New("netd found an adapter on a machine without one: " + st.State)
	}
	return "modules=brcmutil,brcmfmac,brcmfmac_cyw state=" + st.State, nil
}
