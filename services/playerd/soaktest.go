//go:build soaktest

package main

import (
	"log/slog"
	"os"

	"github.com/storybox/storybox/services/playerd/internal/soakctl"
)

// machineHooks of the soak build: a card reader and a screen the soak driver
// reaches over a socket (internal/soakctl) instead of the machine's. The
// household test (household_netns_e2e_test.go) runs this build too, to put
// cards on its boxes' readers. The production binary and the image never
// contain this file.
func machineHooks(log *slog.Logger) (hooks, error) {
	devices, screen, err := soakctl.Start(os.Getenv("STORYBOX_SOAK_CONTROL"), log)
	if err != nil {
		return hooks{}, err
	}
	return hooks{inputDevices: devices, screen: screen}, nil
}
