package sysinfo

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// The runtime section follows what the process holds: goroutines started,
// files opened, and memory kept reachable show up in the next read.
func TestRuntimeFollowsTheProcess(t *testing.T) {
	runtime.GC() // the live heap is what the last collection found
	before := Read(Config{Proc: "/proc"}, Ready{}, time.Now()).Runtime
	if before.Goroutines < 1 || before.HeapInUseBytes < before.HeapLiveBytes || before.HeapLiveBytes <= 0 || before.GCCycles < 1 || before.OpenFiles == nil {
		t.Fatalf("runtime %+v", before)
	}

	const n = 50
	stop := make(chan struct{})
	defer close(stop)
	for range n {
		go func() { <-stop }()
	}
	var files []*os.File
	for i := range 10 {
		f, err := os.Create(filepath.Join(t.TempDir(), "f"+string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	kept := make([][]byte, 64)
	for i := range kept {
		kept[i] = make([]byte, 64<<10) // 4 MiB in all, reachable
	}

	runtime.GC()
	after := Read(Config{Proc: "/proc"}, Ready{}, time.Now()).Runtime
	if after.Goroutines < before.Goroutines+n {
		t.Errorf("goroutines %d after starting %d more than %d", after.Goroutines, n, before.Goroutines)
	}
	if *after.OpenFiles != *before.OpenFiles+int64(len(files)) {
		t.Errorf("open files %d after opening %d more than %d", *after.OpenFiles, len(files), *before.OpenFiles)
	}
	if after.HeapLiveBytes < before.HeapLiveBytes+3<<20 || after.HeapInUseBytes < after.HeapLiveBytes || after.GCCycles <= before.GCCycles {
		t.Errorf("after keeping 4 MiB more: %+v, before %+v", after, before)
	}
	for i := range kept {
		kept[i][0] = 1 // reachable until here
	}
}

func TestRuntimeWithoutProc(t *testing.T) {
	r := Read(Config{Proc: t.TempDir()}, Ready{}, time.Now()).Runtime
	if r.OpenFiles != nil || r.Goroutines < 1 {
		t.Errorf("runtime without /proc: %+v", r)
	}
}
