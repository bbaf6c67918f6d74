package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sample is playerd's resources at one moment: RSS and open files from
// /proc, goroutines and heap from GET /api/admin/system.
type sample struct {
	t          time.Time
	life       int
	age        time.Duration // since this life began
	rss        int64         // bytes
	files      int64
	goroutines int64
	heapInUse  int64
	heapLive   int64
	// cpu is playerd's CPU time so far, wait the time its threads spent
	// ready to run but waiting for a CPU (the machine's contention).
	cpu, wait time.Duration
}

type sampler struct {
	s       *soak
	mu      sync.Mutex
	samples []sample
}

func newSampler(s *soak) *sampler { return &sampler{s: s} }

func (sm *sampler) run(ctx context.Context) {
	t := time.NewTicker(sm.s.cfg.sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if x, ok := sm.take(ctx); ok {
				sm.mu.Lock()
				sm.samples = append(sm.samples, x)
				sm.mu.Unlock()
			}
		}
	}
}

func (sm *sampler) take(ctx context.Context) (sample, bool) {
	s := sm.s
	life := s.gate.enter()
	defer s.gate.leave()
	proc, procLife, started := s.box.current()
	if procLife != life || !proc.running() {
		return sample{}, false
	}
	pid := proc.pid()
	x := sample{t: time.Now(), life: life, age: time.Since(started)}
	var err error
	if x.rss, err = vmRSS(pid); err != nil {
		return sample{}, false
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return sample{}, false
	}
	x.files = int64(len(fds))
	x.cpu, x.wait = cpuAndWait(pid)
	a := s.parent.send(ctx, jsonReq("", "GET", "/api/admin/system", nil))
	if a.err != nil || a.code != 200 {
		if !s.gate.interrupted(life) && ctx.Err() == nil {
			s.rec.violate(life, "sample", "GET /api/admin/system: %d %v %.200s", a.code, a.err, a.body)
		}
		return sample{}, false
	}
	var info struct {
		Runtime struct {
			Goroutines int64 `json:"goroutines"`
			HeapInUse  int64 `json:"heap_in_use_bytes"`
			HeapLive   int64 `json:"heap_live_bytes"`
		} `json:"runtime"`
	}
	if err := a.json(&info); err != nil {
		return sample{}, false
	}
	x.goroutines, x.heapInUse, x.heapLive = info.Runtime.Goroutines, info.Runtime.HeapInUse, info.Runtime.HeapLive
	return x, true
}

// vmRSS reads a process's resident set from /proc.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fs := strings.Fields(v)
			if len(fs) == 2 {
				n, err := strconv.ParseInt(fs[0], 10, 64)
				return n << 10, err
			}
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}

func (sm *sampler) all() []sample {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return append([]sample(nil), sm.samples...)
}

// cpuAndWait reads a process's CPU time (proc/<pid>/stat, utime and stime
// in ticks of 10 ms) and its live threads' time waiting on a run queue
// (proc/<pid>/task/*/schedstat, nanoseconds).
func cpuAndWait(pid int) (cpu, wait time.Duration) {
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := strings.LastIndexByte(string(data), ')'); i > 0 {
			f := strings.Fields(string(data[i+1:]))
			if len(f) > 12 {
				u, _ := strconv.ParseInt(f[11], 10, 64)
				s, _ := strconv.ParseInt(f[12], 10, 64)
				cpu = time.Duration(u+s) * 10 * time.Millisecond
			}
		}
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name())); err == nil {
			if f := strings.Fields(string(data)); len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				wait += time.Duration(n)
			}
		}
	}
	return cpu, wait
}
