package netlimit

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// inputQueued reports whether bytes wait unread in nc's socket.
func inputQueued(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	if rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }) != nil {
		return false
	}
	return n > 0
}
