// Package sysinfo describes the machine for GET /api/admin/system: its
// model, the versions running, uptime, how long playerd took to serve,
// memory and the data partition, and playerd's own runtime (goroutines,
// heap, open files). A value the machine cannot give is nil
// (JSON null), never 0.
package sysinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Config says where to look.
type Config struct {
	Proc, Sys string // "/proc" and "/sys" on the box
	DataDir   string // its file system is the one reported (/perm on the box)
	Version   string // playerd's version
}

// Ready is how long the start took, measured once when the API listens;
// the zero Ready (both null) means it was not measured: the API could not
// listen at once.
type Ready struct {
	// ProcessToReadyMS: from the start of the playerd process to its API
	// listening.
	ProcessToReadyMS *int64 `json:"process_start_to_ready_ms"`
	// KernelUptimeMS: the kernel's uptime at that moment, which on the box
	// is the time from power-on (less the firmware's) to a usable API.
	KernelUptimeMS *int64 `json:"kernel_uptime_at_ready_ms"`
}

// userHZ is the unit of /proc/<pid>/stat times: fixed at 100 for user
// space on every Linux architecture.
const userHZ = 100

// MarkReady measures Ready now. The process start comes from
// proc/self/stat; start (when run began) stands in where that is
// unreadable.
func MarkReady(proc string, start time.Time) Ready {
	process := time.Since(start).Milliseconds()
	r := Ready{ProcessToReadyMS: &process}
	up, ok := uptime(proc)
	if !ok {
		return r
	}
	ms := int64(up * 1000)
	r.KernelUptimeMS = &ms
	if ticks, ok := processStart(proc); ok {
		process = max(0, ms-ticks*1000/userHZ)
	}
	return r
}

// Info is the body of GET /api/admin/system.
type Info struct {
	Model         string    `json:"model"`
	Versions      Versions  `json:"versions"`
	UptimeSeconds *float64  `json:"uptime_seconds"`
	Boot          Ready     `json:"boot"`
	Memory        Memory    `json:"memory"`
	Data          Disk      `json:"data"`
	Runtime       Runtime   `json:"runtime"`
	CollectedAt   time.Time `json:"collected_at"`
}

type Versions struct {
	Playerd string  `json:"playerd"`
	Go      string  `json:"go"`
	Kernel  *string `json:"kernel"`
}

// Memory in bytes: the machine's, and what playerd holds (resident).
type Memory struct {
	TotalBytes     *int64 `json:"total_bytes"`
	AvailableBytes *int64 `json:"available_bytes"`
	PlayerdBytes   *int64 `json:"playerd_bytes"`
}

// Disk is the use of the data directory's file system, in bytes.
type Disk struct {
	TotalBytes *int64 `json:"total_bytes"`
	UsedBytes  *int64 `json:"used_bytes"`
	FreeBytes  *int64 `json:"free_bytes"` // available to playerd
}

// Read collects Info now.
func Read(c Config, ready Ready, now time.Time) Info {
	info := Info{
		Model:       model(c),
		Versions:    Versions{Playerd: c.Version, Go: runtime.Version()},
		Boot:        ready,
		Runtime:     readRuntime(c.Proc),
		CollectedAt: now.UTC(),
	}
	if data, err := os.ReadFile(filepath.Join(c.Proc, "sys/kernel/osrelease")); err == nil {
		v := strings.TrimSpace(string(data))
		info.Versions.Kernel = &v
	}
	if up, ok := uptime(c.Proc); ok {
		info.UptimeSeconds = &up
	}
	mem := kB(filepath.Join(c.Proc, "meminfo"), "MemTotal", "MemAvailable")
	info.Memory = Memory{TotalBytes: mem["MemTotal"], AvailableBytes: mem["MemAvailable"],
		PlayerdBytes: kB(filepath.Join(c.Proc, "self/status"), "VmRSS")["VmRSS"]}
	var st unix.Statfs_t
	if c.DataDir != "" && unix.Statfs(c.DataDir, &st) == nil {
		bs := int64(st.Bsize)
		total, used, free := int64(st.Blocks)*bs, int64(st.Blocks-st.Bfree)*bs, int64(st.Bavail)*bs
		info.Data = Disk{TotalBytes: &total, UsedBytes: &used, FreeBytes: &free}
	}
	return info
}

// model is the board's name from the device tree, "unknown" elsewhere.
func model(c Config) string {
	for _, p := range []string{filepath.Join(c.Proc, "device-tree/model"), filepath.Join(c.Sys, "firmware/devicetree/base/model")} {
		if data, err := os.ReadFile(p); err == nil {
			if m := strings.TrimSpace(strings.TrimRight(string(data), "\x00")); m != "" {
				return m
			}
		}
	}
	return "unknown"
}

func uptime(proc string) (float64, bool) {
	data, err := os.ReadFile(filepath.Join(proc, "uptime"))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil && v >= 0
}

// processStart is field 22 of proc/self/stat: the start in clock ticks
// after boot. The command name (field 2) may hold spaces and parentheses,
// so fields are counted after its last ')'.
func processStart(proc string) (int64, bool) {
	data, err := os.ReadFile(filepath.Join(proc, "self/stat"))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	const field = 22 - 3 // fields after the name start at 3 (state)
	if len(f) <= field {
		return 0, false
	}
	v, err := strconv.ParseInt(f[field], 10, 64)
	return v, err == nil && v >= 0
}

// kB reads "Key: N kB" lines of a /proc file, in bytes.
func kB(path string, keys ...string) map[string]*int64 {
	out := map[string]*int64{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		for _, want := range keys {
			if k != want {
				continue
			}
			fs := strings.Fields(v)
			if len(fs) == 2 && fs[1] == "kB" {
				if n, err := strconv.ParseInt(fs[0], 10, 64); err == nil {
					b := n << 10
					out[k] = &b
				}
			}
		}
	}
	return out
}

// MemoryLimit is the Go runtime's soft memory limit (GOMEMLIMIT, set for
// the board in the gokrazy instance), for a log line.
func MemoryLimit() string {
	n := debug.SetMemoryLimit(-1)
	if n == math.MaxInt64 {
		return "none"
	}
	return fmt.Sprintf("%dMiB", n>>20)
}
