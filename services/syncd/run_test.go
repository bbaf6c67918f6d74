package main

import (
	"context"
	"io"
	"testing"

	"github.com/storybox/storybox/services/internal/daemon"
)

func TestConfigUnusableExits125(t *testing.T) {
	for _, args := range [][]string{
		{"-socket", "syncd.sock"},
		{"-state", "relative"},
		{"-syncthing", "syncthing"},
		{"-gui", "0.0.0.0:8384"},     // the REST API never leaves the box
		{"-gui", "192.168.1.5:8384"}, // nor on the home network's address
		{"-gui", "localhost"},
		{"-port", "0"},
		{"-memory-limit", "1000"},
		{"-cgroup", "/tmp/x"},
		{"extra"},
	} {
		if code := daemon.Start(context.Background(), program, args, io.Discard); code != daemon.ExitNoRestart {
			t.Errorf("%v: exit %d, want %d", args, code, daemon.ExitNoRestart)
		}
	}
	if c, err := daemon.Parse(program, []string{"-gui", "[::1]:8384", "-name", "kinderzimmer"}, io.Discard); err != nil || c.Validate() != nil {
		t.Errorf("good flags: %+v %v %v", c, err, c.Validate())
	}
	// A missing syncthing program cannot appear by a restart either.
	dir := t.TempDir()
	if code := daemon.Start(context.Background(), program, []string{"-socket", dir + "/s.sock", "-state", dir, "-syncthing", dir + "/none",
		"-household", dir + "/h", "-media", dir + "/m", "-browse=false"}, io.Discard); code != daemon.ExitNoRestart {
		t.Errorf("missing syncthing: exit %d", code)
	}
}
