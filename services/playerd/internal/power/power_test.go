package power

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSystem(t *testing.T) {
	var calls []string
	doSync = func() { calls = append(calls, "sync") }
	doReboot = func(cmd int) error {
		if cmd != unix.LINUX_REBOOT_CMD_POWER_OFF {
			t.Errorf("reboot cmd %#x", cmd)
		}
		calls = append(calls, "poweroff")
		return nil
	}
	t.Cleanup(func() { doSync, doReboot = unix.Sync, unix.Reboot })

	if err := System(false)(context.Background()); !errors.Is(err, ErrDryRun) || len(calls) != 0 {
		t.Fatalf("dry run: %v %v", err, calls)
	}
	if err := System(true)(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0] != "sync" || calls[1] != "poweroff" {
		t.Errorf("calls %v, want sync then poweroff", calls)
	}
	doReboot = func(int) error { return unix.EPERM }
	if err := System(true)(context.Background()); !errors.Is(err, unix.EPERM) {
		t.Errorf("err = %v", err)
	}
	doReboot = func(cmd int) error {
		if cmd != unix.LINUX_REBOOT_CMD_RESTART {
			t.Errorf("reboot cmd %#x", cmd)
		}
		calls = append(calls, "reboot")
		return nil
	}
	calls = nil
	if err := SystemReboot(false)(context.Background()); !errors.Is(err, ErrDryRun) || len(calls) != 0 {
		t.Fatalf("dry run: %v %v", err, calls)
	}
	if err := SystemReboot(true)(context.Background()); err != nil || len(calls) != 2 || calls[1] != "reboot" {
		t.Errorf("reboot: %v %v", err, calls)
	}
	if OnGokrazy() {
		t.Log("running on gokrazy")
	}
}

func TestParseAction(t *testing.T) {
	for in, want := range map[string]Action{"reboot": Reboot, "poweroff": PowerOff} {
		if a, err := ParseAction(in); err != nil || a != want {
			t.Errorf("%s: %v %v", in, a, err)
		}
	}
	for _, in := range []string{"", "Reboot", "halt", "shutdown"} {
		if _, err := ParseAction(in); err == nil || err.Error() != "action must be reboot or poweroff" {
			t.Errorf("%q: %v", in, err)
		}
	}
}
