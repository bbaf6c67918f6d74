// Package power switches the box off when its battery is about to cut out,
// and off or to a restart when a parent asks (POST /api/admin/system/power).
package power

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/storybox/storybox/services/internal/fault"
	"golang.org/x/sys/unix"
)

// ErrDryRun is returned on a development machine: nothing was switched off
// or restarted.
var ErrDryRun = errors.New("skipped: not running on gokrazy")

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

// Action is what a parent asks of the box's power.
type Action string

const (
	PowerOff Action = "poweroff"
	Reboot   Action = "reboot"
)

// ParseAction checks a requested action (fault.Invalid otherwise).
func ParseAction(s string) (Action, error) {
	switch a := Action(s); a {
	case PowerOff, Reboot:
		return a, nil
	}
	return "", fault.New(fault.Invalid, "action must be reboot or poweroff")
}

// Func switches the box off. playerd takes one as configuration, so tests
// observe the request instead of powering anything off.
type Func func(ctx context.Context) error

// System returns the real power-off when real is set (use OnGokrazy), and
// otherwise one that only returns ErrDryRun.
func System(real bool) Func { return system(real, unix.LINUX_REBOOT_CMD_POWER_OFF, "power off") }

// SystemReboot is System for a restart.
func SystemReboot(real bool) Func { return system(real, unix.LINUX_REBOOT_CMD_RESTART, "reboot") }

func system(real bool, cmd int, what string) Func {
	return func(context.Context) error {
		if !real {
			return ErrDryRun
		}
		// Flush /perm (settings, resume positions) before the power goes.
		doSync()
		if err := doReboot(cmd); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
}
