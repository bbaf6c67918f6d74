package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The probe is this program built for arm64 and run on the board as a
// gokrazy diversion (the way gok run starts a program there): gokrazy's
// status page counts only each service's own process, and Syncthing is
// syncd's child, so its memory and CPU are read from /proc on the board
// and printed to the probe's log, which the test reads through gokrazy's
// web interface.

// probeEvery is how often the probe samples Syncthing.
const probeEvery = time.Second

// probe prints one sample of Syncthing (the `serve` process of
// /user/syncthing) a second, for ever: the board's monotonic clock (so
// that samples stay in order when gokrazy starts the probe again), its pid
// (0 while none runs), resident memory and user plus system CPU time in
// clock ticks.
func probe() {
	for {
		pid := findSyncthing()
		var rss, ticks int64
		if pid > 0 {
			rss, ticks = procRSS(pid), procTicks(pid)
		}
		var now unix.Timespec
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
		fmt.Fprintf(os.Stderr, "probe ms=%d pid=%d rss_kib=%d ticks=%d\n", now.Nano()/1e6, pid, rss, ticks)
		time.Sleep(probeEvery)
	}
}

func findSyncthing() int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if len(args) > 1 && args[0] == "/user/syncthing" && args[1] == "serve" {
			return pid
		}
	}
	return 0
}

// procRSS is VmRSS in KiB.
func procRSS(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// procTicks is utime plus stime (/proc/PID/stat fields 14 and 15).
func procTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

// sample is one probe line.
type sample struct {
	ms, pid, rssKiB, ticks int64
}

var probeLine = regexp.MustCompile(`probe ms=(\d+) pid=(\d+) rss_kib=(\d+) ticks=(\d+)`)

// parseSamples reads the probe's lines out of its log.
func parseSamples(log string) []sample {
	var out []sample
	for _, m := range probeLine.FindAllStringSubmatch(log, -1) {
		var s sample
		for i, p := range []*int64{&s.ms, &s.pid, &s.rssKiB, &s.ticks} {
			*p, _ = strconv.ParseInt(m[i+1], 10, 64)
		}
		out = append(out, s)
	}
	return out
}

// ticksPerSecond is the kernel's USER_HZ, 100 on arm64 and amd64.
const ticksPerSecond = 100

// usage is Syncthing over a span of samples: the peak resident memory and
// the CPU it used as a share of one core. Spans across a restart of
// Syncthing (a new pid) count each process's own ticks.
type usage struct {
	peakKiB, lastKiB int64
	core             float64
	seconds          float64
}

func spanUsage(ss []sample) usage {
	var u usage
	if len(ss) < 2 {
		return u
	}
	var ticks int64
	for i, s := range ss {
		u.peakKiB = max(u.peakKiB, s.rssKiB)
		if i > 0 && s.pid == ss[i-1].pid && s.pid != 0 {
			ticks += s.ticks - ss[i-1].ticks
		} else if i > 0 && s.pid != 0 {
			ticks += s.ticks // a new process: all of its time is in the span
		}
	}
	u.lastKiB = ss[len(ss)-1].rssKiB
	u.seconds = float64(ss[len(ss)-1].ms-ss[0].ms) / 1000
	if u.seconds > 0 {
		u.core = float64(ticks) / ticksPerSecond / u.seconds
	}
	return u
}
