package display

import (
	"errors"
	"fmt"
	"image"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Framebuffer ioctls and structures from <linux/fb.h>. The structs use
// uintptr for C's unsigned long, so the layout is right on arm64 and amd64
// (fix: 80 bytes, var: 160 bytes).
const (
	fbiogetVScreenInfo = 0x4600
	fbiogetFScreenInfo = 0x4602
)

type fbBitfield struct {
	Offset, Length, MSBRight uint32
}

type fbVarScreenInfo struct {
	XRes, YRes, XResVirtual, YResVirtual uint32
	XOffset, YOffset                     uint32
	BitsPerPixel, Grayscale              uint32
	Red, Green, Blue, Transp             fbBitfield
	Nonstd, Activate, Height, Width      uint32
	AccelFlags                           uint32
	Timing                               [9]uint32 // pixclock … vmode
	Rotate, Colorspace                   uint32
	Reserved                             [4]uint32
}

type fbFixScreenInfo struct {
	ID                           [16]byte
	SmemStart                    uintptr
	SmemLen, Type, TypeAux       uint32
	Visual                       uint32
	XPanStep, YPanStep, YWrapStp uint16
	LineLength                   uint32
	MMIOStart                    uintptr
	MMIOLen, Accel               uint32
	Capabilities                 uint16
	Reserved                     [2]uint16
}

// Framebuffer is a Screen on a Linux fbdev device such as /dev/fb0. While it
// is open the text console is in graphics mode, so fbcon's cursor and
// kernel messages do not draw over the picture.
type Framebuffer struct {
	f       *os.File
	mem     []byte
	p       pixfmt
	console *console
}

// OpenFramebuffer maps the framebuffer device and, when tty is not empty
// (normally /dev/tty0), switches that console to graphics mode until Close.
func OpenFramebuffer(dev, tty string) (*Framebuffer, error) {
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("display: %w", err)
	}
	fb := &Framebuffer{f: f}
	if err := fb.setup(); err != nil {
		f.Close()
		return nil, fmt.Errorf("display: %s: %w", dev, err)
	}
	if tty != "" {
		c, err := graphicsMode(tty)
		if err != nil {
			fb.Close()
			return nil, err
		}
		fb.console = c
	}
	return fb, nil
}

func (fb *Framebuffer) setup() error {
	var vi fbVarScreenInfo
	var fi fbFixScreenInfo
	if err := ioctlPtr(fb.f, fbiogetVScreenInfo, unsafe.Pointer(&vi)); err != nil {
		return fmt.Errorf("FBIOGET_VSCREENINFO: %w", err)
	}
	if err := ioctlPtr(fb.f, fbiogetFScreenInfo, unsafe.Pointer(&fi)); err != nil {
		return fmt.Errorf("FBIOGET_FSCREENINFO: %w", err)
	}
	p, err := newPixfmt(vi, fi)
	if err != nil {
		return err
	}
	need := p.offset + p.stride*(p.h-1) + p.w*p.bpp
	if need > int(fi.SmemLen) {
		return fmt.Errorf("mode %dx%d needs %d bytes, device has %d", p.w, p.h, need, fi.SmemLen)
	}
	mem, err := unix.Mmap(int(fb.f.Fd()), 0, int(fi.SmemLen), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap: %w", err)
	}
	fb.mem, fb.p = mem, p
	return nil
}

func ioctlPtr(f *os.File, req uintptr, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), req, uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// Size implements Screen.
func (fb *Framebuffer) Size() image.Point { return image.Pt(fb.p.w, fb.p.h) }

// Show implements Screen.
func (fb *Framebuffer) Show(frame *image.RGBA) error {
	if fb.mem == nil {
		return errors.New("framebuffer is closed")
	}
	return fb.p.copy(fb.mem, frame)
}

// ShowRegion copies the part r of the frame (display.RegionScreen).
func (fb *Framebuffer) ShowRegion(frame *image.RGBA, r image.Rectangle) error {
	if fb.mem == nil {
		return errors.New("framebuffer is closed")
	}
	return fb.p.copyRect(fb.mem, frame, r)
}

// Close unmaps the device and gives the console back its text mode.
func (fb *Framebuffer) Close() error {
	var errs []error
	if fb.mem != nil {
		errs = append(errs, unix.Munmap(fb.mem))
		fb.mem = nil
	}
	if fb.console != nil {
		errs = append(errs, fb.console.restore())
		fb.console = nil
	}
	errs = append(errs, fb.f.Close())
	return errors.Join(errs...)
}

// Console modes from <linux/kd.h>.
const (
	kdSetMode  = 0x4b3a
	kdText     = 0x00
	kdGraphics = 0x01
)

type console struct {
	f *os.File
}

// graphicsMode switches the virtual console to KD_GRAPHICS: the kernel then
// stops drawing its text and blinking cursor into the framebuffer.
func graphicsMode(tty string) (*console, error) {
	f, err := os.OpenFile(tty, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("display: console: %w", err)
	}
	if err := unix.IoctlSetInt(int(f.Fd()), kdSetMode, kdGraphics); err != nil {
		f.Close()
		return nil, fmt.Errorf("display: console %s: KDSETMODE graphics: %w", tty, err)
	}
	return &console{f: f}, nil
}

func (c *console) restore() error {
	err := unix.IoctlSetInt(int(c.f.Fd()), kdSetMode, kdText)
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("display: console: restore mode: %w", err)
	}
	return nil
}
