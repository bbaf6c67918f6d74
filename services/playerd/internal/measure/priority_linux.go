package measure

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// lowerPriority puts the calling goroutine on a thread of its own at nice
// 19, the lowest ordinary priority: the kernel runs the player's and the
// API's threads first. The thread is never unlocked, so it ends with the
// goroutine and its priority never reaches another goroutine.
//
// SCHED_IDLE was the other choice and is not taken: a thread that gets no
// CPU at all while others are busy would hold up the Go runtime's
// stop-the-world phases of garbage collection for every goroutine,
// the player's included. Nice 19 still gets a sliver of CPU, so it always
// reaches the runtime's next preemption point.
func lowerPriority() error {
	runtime.LockOSThread()
	return unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19)
}
