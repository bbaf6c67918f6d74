// Package power switches the box off when its battery is about to cut out.
package power

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrDryRun is returned by Off on a development machine: nothing was
// switched off.
var ErrDryRun = errors.New("power-off skipped: not running on gokrazy")

// Seams for tests; the real calls need root and end the machine.
var (
	doSync   = unix.Sync
	doReboot = unix.Reboot
)

// OnGokrazy reports whether this is a gokrazy appliance, whose root file
// system carries /gokrazy.
func OnGokrazy() bool {
	fi, err := os.Stat("/gokrazy")
	return err == nil && fi.IsDir()
}

// Func switches the box off. playerd takes one as configuration, so tests
// observe the request instead of powering anything off.
type Func func(ctx context.Context) error

// System returns the real power-off when real is set (use OnGokrazy), and
// otherwise one that only returns ErrDryRun.
func System(real bool) Func {
	return func(context.Context) error {
		if !real {
			return ErrDryRun
		}
		// Flush /perm (settings, resume positions) before the power goes.
		doSync()
		if err := doReboot(unix.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
			return fmt.Errorf("power off: %w", err)
		}
		return nil
	}
}

// Reboot returns the real restart when real is set, and otherwise one that
// only returns ErrDryRun.
func Reboot(real bool) Func {
	return func(context.Context) error {
		if !real {
			return ErrDryRun
		}
		doSync()
		if err := doReboot(unix.LINUX_REBOOT_CMD_RESTART); err != nil {
			return fmt.Errorf("reboot: %w", err)
		}
		return nil
	}
}
