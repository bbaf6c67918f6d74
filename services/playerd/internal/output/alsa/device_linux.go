package alsa

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fileConn is a Conn on an open /dev/snd/pcmC*D* node.
type fileConn struct{ fd int }

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	// Syscall, not RawSyscall: writes and drains block for a long time.
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

func (c fileConn) HWRefine(p *hwParams) error { return ioctl(c.fd, iocHWRefine, unsafe.Pointer(p)) }
func (c fileConn) HWParams(p *hwParams) error { return ioctl(c.fd, iocHWParams, unsafe.Pointer(p)) }
func (c fileConn) SWParams(p *swParams) error { return ioctl(c.fd, iocSWParams, unsafe.Pointer(p)) }
func (c fileConn) Prepare() error             { return ioctl(c.fd, iocPrepare, nil) }
func (c fileConn) Drop() error                { return ioctl(c.fd, iocDrop, nil) }
func (c fileConn) Drain() error               { return ioctl(c.fd, iocDrain, nil) }
func (c fileConn) Resume() error              { return ioctl(c.fd, iocResume, nil) }
func (c fileConn) WriteI(x *xferi) error      { return ioctl(c.fd, iocWriteI, unsafe.Pointer(x)) }
func (c fileConn) ReadI(x *xferi) error       { return ioctl(c.fd, iocReadI, unsafe.Pointer(x)) }
func (c fileConn) Delay(frames *int) error    { return ioctl(c.fd, iocDelay, unsafe.Pointer(frames)) }
func (c fileConn) Rewind(frames *uint) error  { return ioctl(c.fd, iocRewind, unsafe.Pointer(frames)) }
func (c fileConn) Close() error               { return unix.Close(c.fd) }

// openConn opens a PCM node. O_NONBLOCK makes a busy device fail at once
// instead of waiting for its owner to close it; transfers then block again.
func openConn(path, name string) (fileConn, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, syscall.EBUSY):
			return fileConn{}, fmt.Errorf("alsa %s: device is busy (another program is playing on it): %w", name, err)
		case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENODEV), errors.Is(err, syscall.ENXIO):
			return fileConn{}, fmt.Errorf("alsa %s: %w (%w)", name, ErrGone, err)
		}
		return fileConn{}, fmt.Errorf("alsa %s: open %s: %w", name, path, err)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return fileConn{}, fmt.Errorf("alsa %s: %w", name, err)
	}
	var version int32
	if err := ioctl(fd, iocPVersion, unsafe.Pointer(&version)); err != nil {
		unix.Close(fd)
		return fileConn{}, fmt.Errorf("alsa %s: %s is not a PCM device: %w", name, path, err)
	}
	return fileConn{fd: fd}, nil
}

// Open opens and configures a playback device node such as
// /dev/snd/pcmC0D0p. name labels errors ("hw:0,0 (Headphones)").
func Open(path, name string, cfg Config) (*PCM, error) {
	c, err := openConn(path, name)
	if err != nil {
		return nil, err
	}
	return NewPCM(c, name, cfg)
}

// Capture is a capture stream, for tests that record what a loopback
// device played.
type Capture struct {
	c fileConn
	*PCM
}

// OpenCapture opens and configures a capture node (/dev/snd/pcmC0D1c).
// Capture starts with the first Read.
func OpenCapture(path, name string, cfg Config) (*Capture, error) {
	c, err := openConn(path, name)
	if err != nil {
		return nil, err
	}
	p, err := NewPCM(c, name, cfg)
	if err != nil {
		return nil, err
	}
	sp := swParams{availMin: uint(p.period), startThreshold: 1, stopThreshold: uint(p.buffer), proto: pcmProtocol}
	if err := c.SWParams(&sp); err != nil {
		p.Close()
		return nil, p.errorf("set capture software parameters: %w", err)
	}
	return &Capture{c: c, PCM: p}, nil
}

// Read fills buf with whole frames and returns how many it read. An overrun
// is reported as an error: a capture for comparison must not lose frames.
func (c *Capture) Read(buf []byte) (int, error) {
	n := len(buf) / c.frame
	for off := 0; off < n; {
		x := xferi{buf: unsafe.Pointer(&buf[off*c.frame]), frames: uint(n - off)}
		if err := c.c.ReadI(&x); err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			return off, c.fail("read", err)
		}
		off += x.result
	}
	return n, nil
}
