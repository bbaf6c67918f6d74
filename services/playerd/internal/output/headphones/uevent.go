package headphones

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Uevents is the kernel's uevent multicast (NETLINK_KOBJECT_UEVENT): a
// message for every device added, removed or changed, without polling.
// Those of the sound subsystem (a card, its control and PCM devices) are
// the changes. The socket is read through Go's poller, so a blocked read
// costs nothing and closing it ends the read.
type Uevents struct{}

// kernelGroup is the multicast group the kernel itself sends to (udev
// resends to another).
const kernelGroup = 1

// Changes opens the socket and reads it until ctx ends.
func (Uevents) Changes(ctx context.Context) (<-chan struct{}, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_KOBJECT_UEVENT)
	if err != nil {
		return nil, fmt.Errorf("uevent socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: kernelGroup}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("uevent socket: %w", err)
	}
	f := os.NewFile(uintptr(fd), "uevent")
	out := make(chan struct{}, 1)
	stop := context.AfterFunc(ctx, func() { f.Close() })
	go func() {
		defer close(out)
		defer stop()
		buf := make([]byte, 64<<10)
		for {
			n, err := f.Read(buf)
			switch {
			case errors.Is(err, unix.ENOBUFS):
				// Messages were lost: one of them may have been a card's.
				n, err = 0, nil
				signal(out)
			case err != nil:
				f.Close()
				return
			}
			if n > 0 && soundEvent(buf[:n]) {
				signal(out)
			}
		}
	}()
	return out, nil
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// soundEvent reports whether msg, "ACTION@DEVPATH\0KEY=VALUE\0...", is of
// the sound subsystem.
func soundEvent(msg []byte) bool {
	for _, f := range bytes.Split(msg, []byte{0}) {
		if bytes.Equal(f, []byte("SUBSYSTEM=sound")) {
			return true
		}
	}
	return false
}
