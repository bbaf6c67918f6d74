package sysinfo

import (
	"os"
	"path/filepath"
	"runtime/metrics"
)

// Runtime is playerd itself: what grows when something leaks. A box runs
// for months without a reboot and has no shell, so this is how a slow leak
// of goroutines, memory or files is seen on one (and what the soak test,
// services/playerd/cmd/soak, fits its trends to).
type Runtime struct {
	Goroutines int64 `json:"goroutines"`
	// HeapInUseBytes: the heap's spans in use (live and not yet swept
	// objects, and the free room inside those spans); it rises and falls
	// with each collection.
	HeapInUseBytes int64 `json:"heap_in_use_bytes"`
	// HeapLiveBytes: what the last collection found reachable; the steady
	// measure of what playerd holds.
	HeapLiveBytes int64 `json:"heap_live_bytes"`
	GCCycles      int64 `json:"gc_cycles"`
	// OpenFiles: file descriptors open (files, sockets, pipes, devices),
	// from proc/self/fd; null where that cannot be read.
	OpenFiles *int64 `json:"open_files"`
}

var runtimeSamples = []string{
	"/sched/goroutines:goroutines",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/gc/heap/live:bytes",
	"/gc/cycles/total:gc-cycles",
}

// readRuntime reads the runtime's counters (runtime/metrics: no
// stop-the-world, unlike runtime.ReadMemStats).
func readRuntime(proc string) Runtime {
	s := make([]metrics.Sample, len(runtimeSamples))
	for i, name := range runtimeSamples {
		s[i].Name = name
	}
	metrics.Read(s)
	v := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s[i].Value.Uint64())
	}
	r := Runtime{Goroutines: v(0), HeapInUseBytes: v(1) + v(2), HeapLiveBytes: v(3), GCCycles: v(4)}
	// Reading the directory holds one descriptor of its own, which it lists.
	if fds, err := os.ReadDir(filepath.Join(proc, "self/fd")); err == nil {
		n := int64(max(len(fds)-1, 0))
		r.OpenFiles = &n
	}
	return r
}
