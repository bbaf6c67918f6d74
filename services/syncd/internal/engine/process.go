package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Linux's ioprio_set(2): the class sits above 13 bits of data; the idle
// class gets disk time only when no other process asks for it.
const (
	ioprioWhoProcess = 1
	ioprioClassIdle  = 3
	ioprioClassShift = 13
)

// startLow starts cmd at nice 19 and in the idle I/O class, so that a box
// hashing or fetching a large library never takes the disk or a core from
// the player, and returns where its exit is told. Both are per thread on
// Linux and a child inherits them from the thread that forks it: the fork
// happens on a thread locked for it and lowered, which then waits for the
// child and is discarded with its goroutine (one that ends locked takes
// its thread with it), so nothing else in syncd runs lowered. The thread
// lives as long as the child because Pdeathsig is tied to the forking
// thread, not to the process.
func startLow(cmd *exec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, 19); err != nil {
			started <- fmt.Errorf("nice 19: %w", err)
			return
		}
		if _, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, ioprioClassIdle<<ioprioClassShift); e != 0 {
			started <- fmt.Errorf("ioprio_set idle: %w", e)
			return
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}

// memoryCgroup makes (or reuses) the cgroup v2 group dir with memory.max
// set to limit bytes and returns it opened, for SysProcAttr.CgroupFD: the
// kernel then reclaims from, and at worst ends, Syncthing alone. An error
// means the kernel offers no such group here (no cgroup2 mount, no memory
// controller); syncd then relies on GOMEMLIMIT alone.
func memoryCgroup(dir string, limit int64) (*os.File, error) {
	parent := filepath.Dir(dir)
	if _, err := os.Stat(filepath.Join(parent, "cgroup.controllers")); err != nil {
		return nil, fmt.Errorf("no cgroup v2 at %s: %w", parent, err)
	}
	// The memory controller must be handed down to the new group; it may
	// already be.
	_ = os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory"), 0)
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(limit, 10)), 0); err != nil {
		return nil, fmt.Errorf("memory.max: %w", err)
	}
	return os.Open(dir)
}

// sysProcAttr puts the child in its own process group (a kill reaches
// Syncthing alone, not syncd) and, with cg, in the memory cgroup; the
// child dies with syncd.
func sysProcAttr(cg *os.File) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cg != nil {
		a.UseCgroupFD, a.CgroupFD = true, int(cg.Fd())
	}
	return a
}
