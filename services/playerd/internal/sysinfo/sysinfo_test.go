package sysinfo

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadFromAFakeMachine(t *testing.T) {
	proc, sys := t.TempDir(), t.TempDir()
	write(t, filepath.Join(sys, "firmware/devicetree/base/model"), "Raspberry Pi Zero 2 W Rev 1.0\x00")
	write(t, filepath.Join(proc, "sys/kernel/osrelease"), "6.6.31-v8+\n")
	write(t, filepath.Join(proc, "uptime"), "12.50 40.00\n")
	write(t, filepath.Join(proc, "meminfo"), "MemTotal:         443504 kB\nMemFree: 1 kB\nMemAvailable:     300000 kB\n")
	write(t, filepath.Join(proc, "self/status"), "Name:\tplayerd\nVmRSS:\t   20480 kB\n")
	// The command name holds ") (" on purpose; starttime is 450 ticks.
	write(t, filepath.Join(proc, "self/stat"), "42 (play) (erd) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 8 0 450 1000 200\n")

	ready := MarkReady(proc, time.Now())
	if *ready.ProcessToReadyMS != 12500-4500 || ready.KernelUptimeMS == nil || *ready.KernelUptimeMS != 12500 {
		t.Errorf("ready %+v", ready)
	}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	info := Read(Config{Proc: proc, Sys: sys, DataDir: t.TempDir(), Version: "1.2.3"}, ready, now)
	if info.Model != "Raspberry Pi Zero 2 W Rev 1.0" || info.Versions.Playerd != "1.2.3" || info.Versions.Go != runtime.Version() ||
		*info.Versions.Kernel != "6.6.31-v8+" || *info.UptimeSeconds != 12.5 || !info.CollectedAt.Equal(now) {
		t.Errorf("info %+v", info)
	}
	if *info.Memory.TotalBytes != 443504<<10 || *info.Memory.AvailableBytes != 300000<<10 || *info.Memory.PlayerdBytes != 20480<<10 {
		t.Errorf("memory %+v", info.Memory)
	}
	d := info.Data
	if d.TotalBytes == nil || *d.TotalBytes <= 0 || *d.UsedBytes > *d.TotalBytes || *d.FreeBytes > *d.TotalBytes {
		t.Errorf("data %+v", d)
	}
}

func TestNothingKnownIsNull(t *testing.T) {
	start := time.Now().Add(-time.Second)
	ready := MarkReady(t.TempDir(), start)
	if ready.KernelUptimeMS != nil || *ready.ProcessToReadyMS < 1000 {
		t.Errorf("ready without /proc: %+v", ready)
	}
	info := Read(Config{Proc: t.TempDir(), Sys: t.TempDir()}, ready, time.Now())
	if info.Model != "unknown" || info.Versions.Kernel != nil || info.UptimeSeconds != nil ||
		info.Memory.TotalBytes != nil || info.Data.TotalBytes != nil {
		t.Errorf("info %+v", info)
	}
}
