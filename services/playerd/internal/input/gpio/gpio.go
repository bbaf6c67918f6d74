package gpio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Chip describes a GPIO chip (GPIO_GET_CHIPINFO_IOCTL).
type Chip struct {
	Path  string
	Name  string // gpiochip0
	Label string // the driver's: pinctrl-bcm2711 (Pi 4), pinctrl-rp1 (Pi 5)
	Lines int
}

// Info reads a chip's description.
func Info(path string) (Chip, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Chip{}, fmt.Errorf("gpio: %w", err)
	}
	defer unix.Close(fd)
	var ci chipInfo
	if err := ioctl(fd, iocChipInfo, unsafe.Pointer(&ci)); err != nil {
		return Chip{}, fmt.Errorf("gpio: %s: chip info: %w", path, err)
	}
	return Chip{Path: path, Name: cString(ci.name[:]), Label: cString(ci.label[:]), Lines: int(ci.lines)}, nil
}

// Chips lists the GPIO chips under dir ("/dev" on the box), by number.
func Chips(dir string) ([]Chip, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "gpiochip*"))
	if err != nil {
		return nil, fmt.Errorf("gpio: %w", err)
	}
	sort.Slice(paths, func(i, j int) bool {
		if len(paths[i]) != len(paths[j]) {
			return len(paths[i]) < len(paths[j]) // gpiochip2 before gpiochip10
		}
		return paths[i] < paths[j]
	})
	var out []Chip
	for _, p := range paths {
		c, err := Info(p)
		if err != nil {
			continue // not a chip after all, or gone since the glob
		}
		out = append(out, c)
	}
	return out, nil
}

// Find resolves which chip spec means among chips: "auto" is the
// Raspberry Pi's pin header (the first chip whose label starts with
// "pinctrl-"; on other boards the first chip); otherwise spec is a path, a
// chip name (gpiochip0) or a label.
func Find(chips []Chip, spec string) (Chip, error) {
	if len(chips) == 0 {
		return Chip{}, errors.New("gpio: no GPIO chips")
	}
	if spec == "auto" {
		for _, c := range chips {
			if strings.HasPrefix(c.Label, "pinctrl-") {
				return c, nil
			}
		}
		return chips[0], nil
	}
	for _, c := range chips {
		if c.Path == spec || c.Name == spec || c.Label == spec {
			return c, nil
		}
	}
	return Chip{}, fmt.Errorf("gpio: no chip %q", spec)
}

// Bias of an input line.
const (
	PullUp   = "pull-up"
	PullDown = "pull-down"
	NoBias   = "disabled"
)

// Config is a request for edge events on lines of one chip.
type Config struct {
	Offsets []int
	// ActiveLow: a pressed button pulls the line low (a button to ground
	// with a pull-up, the usual wiring). Events are then reported as the
	// kernel sees them logically: Active means pressed.
	ActiveLow bool
	Bias      string // PullUp, PullDown, NoBias, or "" to leave it as it is
	// Debounce asks the kernel to debounce the lines (in hardware, or in
	// gpiolib's software debouncer where the chip has none); 0: not at all.
	Debounce time.Duration
	Consumer string // shown by gpioinfo as the lines' user
}

// Event is one edge on a line.
type Event struct {
	Offset int
	Active bool          // the line became active (rising, logically)
	Time   time.Duration // kernel CLOCK_MONOTONIC
}

// Lines is a granted line request; Read returns its edges.
type Lines struct {
	f       *os.File
	offsets []int
	buf     [16 * 48]byte
	pending []Event
}

// Watch requests edge events for cfg.Offsets on the chip at path. The lines
// stay requested (and busy for anyone else) until Close.
func Watch(path string, cfg Config) (*Lines, error) {
	if len(cfg.Offsets) == 0 || len(cfg.Offsets) > linesMax {
		return nil, fmt.Errorf("gpio: %d lines requested, want 1..%d", len(cfg.Offsets), linesMax)
	}
	var req lineRequest
	for i, o := range cfg.Offsets {
		if o < 0 {
			return nil, fmt.Errorf("gpio: line %d", o)
		}
		req.offsets[i] = uint32(o)
	}
	req.numLines = uint32(len(cfg.Offsets))
	copy(req.consumer[:maxNameSize-1], cfg.Consumer)
	req.config.flags = flagInput | flagEdgeRising | flagEdgeFalling
	if cfg.ActiveLow {
		req.config.flags |= flagActiveLow
	}
	switch cfg.Bias {
	case PullUp:
		req.config.flags |= flagBiasPullUp
	case PullDown:
		req.config.flags |= flagBiasPullDown
	case NoBias:
		req.config.flags |= flagBiasDisabled
	case "":
	default:
		return nil, fmt.Errorf("gpio: bias %q", cfg.Bias)
	}
	if cfg.Debounce > 0 {
		req.config.numAttrs = 1
		req.config.attrs[0] = lineConfigAttribute{
			attr: lineAttribute{id: attrDebounce, value: uint64(cfg.Debounce / time.Microsecond)},
			mask: 1<<uint(len(cfg.Offsets)) - 1,
		}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("gpio: %w", err)
	}
	err = ioctl(fd, iocGetLine, unsafe.Pointer(&req))
	unix.Close(fd) // the request lives on without the chip's descriptor
	if err != nil {
		return nil, fmt.Errorf("gpio: %s: request lines %v: %w", path, cfg.Offsets, err)
	}
	// Non-blocking before NewFile, so the file joins Go's poller and Close
	// ends a pending Read.
	if err := unix.SetNonblock(int(req.fd), true); err != nil {
		unix.Close(int(req.fd))
		return nil, fmt.Errorf("gpio: %w", err)
	}
	return &Lines{f: os.NewFile(uintptr(req.fd), "gpio-lines"), offsets: append([]int(nil), cfg.Offsets...)}, nil
}

// Read blocks until the next edge. After Close it returns an error
// wrapping os.ErrClosed.
func (l *Lines) Read() (Event, error) {
	for len(l.pending) == 0 {
		n, err := l.f.Read(l.buf[:])
		if err != nil {
			return Event{}, fmt.Errorf("gpio: read events: %w", err)
		}
		if n%int(unsafe.Sizeof(lineEvent{})) != 0 {
			return Event{}, fmt.Errorf("gpio: read events: %w", io.ErrUnexpectedEOF)
		}
		for b := l.buf[:n]; len(b) >= 48; b = b[48:] {
			l.pending = append(l.pending, decodeEvent(b))
		}
	}
	ev := l.pending[0]
	l.pending = l.pending[1:]
	return ev, nil
}

// decodeEvent reads a struct gpio_v2_line_event (little-endian, as on
// every target the box runs on) at the offsets of lineEvent.
func decodeEvent(b []byte) Event {
	var e lineEvent
	return Event{
		Time:   time.Duration(binary.LittleEndian.Uint64(b[unsafe.Offsetof(e.timestampNs):])),
		Active: binary.LittleEndian.Uint32(b[unsafe.Offsetof(e.id):]) == eventRising,
		Offset: int(binary.LittleEndian.Uint32(b[unsafe.Offsetof(e.offset):])),
	}
}

// Values reads the lines' current logical levels, in the order of
// Config.Offsets.
func (l *Lines) Values() ([]bool, error) {
	v := lineValues{mask: 1<<uint(len(l.offsets)) - 1}
	rc, err := l.f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("gpio: %w", err)
	}
	var ierr error
	if err := rc.Control(func(fd uintptr) { ierr = ioctl(int(fd), iocGetValues, unsafe.Pointer(&v)) }); err != nil {
		return nil, fmt.Errorf("gpio: %w", err)
	}
	if ierr != nil {
		return nil, fmt.Errorf("gpio: read values: %w", ierr)
	}
	out := make([]bool, len(l.offsets))
	for i := range out {
		out[i] = v.bits&(1<<uint(i)) != 0
	}
	return out, nil
}

// Close releases the lines.
func (l *Lines) Close() error { return l.f.Close() }

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
