package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// screenshotGrowthLimit bounds how much 256 screenshot requests at once
// may raise playerd's peak resident memory beyond what the same burst of
// cheap requests did. Bounded (two made at once, four waiting, their
// buffers reused) it grew by 5-7 MB here; without the bound every request
// that got a connection renders at once, about 2.5 MB each: 25 MB with 32
// connections, more with more.
const screenshotGrowthLimit = 16 << 20

// 256 screenshot requests at once from one address against the real
// playerd: every one is answered, 200, or 429 (too many screenshots) or
// 503 (too many connections) with Retry-After, none is reset or closed
// unanswered, and the peak resident memory (VmHWM) stays within
// screenshotGrowthLimit of what it was before.
func TestScreenshotsAtOnceBounded(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}, "Musik/Lieder": {2}})
	// As many threads as requests can reach the handlers: every request
	// renders at once unless bounded, as a slow CPU (a Pi Zero takes
	// tens of milliseconds per screenshot) interleaves them with one.
	b := startPlayerd(t, buildPlayerd(t), media, t.TempDir(), "-procs", "64")
	pid := b.cmd.Process.Pid
	target := strings.TrimPrefix(b.base, "http://")
	for range 3 { // the renderer's fonts and covers, the PNG encoder's first use
		resp, err := b.http.Get(b.base + "/api/display/screenshot")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("screenshot: %s", resp.Status)
		}
	}
	// The same burst of cheap requests first: what 256 connections at
	// once cost is in the peak before, so the figure is the screenshots'.
	for range 2 {
		burst(t, target, "/api/health")
	}
	before := peakRSS(t, pid)
	counts := burst(t, target, "/api/display/screenshot")
	after := peakRSS(t, pid)
	t.Logf("256 screenshot requests at once from one address: %v; peak RSS %.1f MB before, %.1f MB after (+%.1f MB)",
		counts, mb(before), mb(after), mb(after-before))
	for outcome, k := range counts {
		switch outcome {
		case "200", "429 with Retry-After", "503 with Retry-After":
		default:
			t.Errorf("%d requests ended %s", k, outcome)
		}
	}
	if after-before > screenshotGrowthLimit {
		t.Errorf("peak RSS grew by %.1f MB, more than %.0f MB", mb(after-before), mb(screenshotGrowthLimit))
	}
}

// burst connects 256 times from 127.0.0.2, then sends GET path on every
// connection at once; it counts how the requests ended.
func burst(t *testing.T, target, path string) map[string]int {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	conns := make([]net.Conn, 256)
	for i := range conns {
		c, err := d.Dial("tcp", target)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[string]int{}
	)
	start := make(chan struct{})
	for _, c := range conns {
		wg.Go(func() {
			<-start
			outcome := outcomeOf(c, target, path)
			mu.Lock()
			counts[outcome]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return counts
}

func outcomeOf(c net.Conn, target, path string) string {
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+target+"\r\nConnection: close\r\n\r\n"); err != nil {
		return "write: " + err.Error()
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "read: " + err.Error()
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		return "body: " + err.Error()
	case resp.StatusCode == http.StatusOK:
		return "200"
	case resp.Header.Get("Retry-After") != "":
		return strconv.Itoa(resp.StatusCode) + " with Retry-After"
	}
	return resp.Status
}

// peakRSS is the process's peak resident memory so far (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
