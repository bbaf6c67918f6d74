package input

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	evdev "github.com/holoplot/go-evdev"
)

// Node is an input device node. Key tells one device from the next that
// gets the same path: a reader unplugged and plugged in again may come back
// as the same eventN, but as a new node.
type Node struct {
	Path string
	Key  uint64
}

// DeviceInfo is what the kernel tells about an input device.
type DeviceInfo struct {
	Name            string
	Vendor, Product uint16
	Keys            []evdev.EvCode // the key codes it can send
	Abs             bool           // it reports absolute axes: a touch screen
}

// Device is an open input device.
type Device interface {
	ReadOne() (*evdev.InputEvent, error)
	Close() error
}

// Devices finds and opens input devices: /dev/input through evdev on the
// box, a fake in tests.
type Devices interface {
	List() ([]Node, error)
	Probe(path string) (DeviceInfo, error)
	// Open opens a device for reading; grab takes it for this program
	// alone, so its keys reach no console or other reader.
	Open(path string, grab bool) (Device, error)
}

// Evdev is Devices on the kernel's /dev/input/event* nodes.
type Evdev struct {
	Dir string // "" means /dev/input
}

func (e Evdev) dir() string {
	if e.Dir == "" {
		return "/dev/input"
	}
	return e.Dir
}

// List implements Devices.
func (e Evdev) List() ([]Node, error) {
	entries, err := os.ReadDir(e.dir())
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	var out []Node
	for _, de := range entries {
		if !strings.HasPrefix(de.Name(), "event") {
			continue
		}
		p := filepath.Join(e.dir(), de.Name())
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			continue // gone since ReadDir
		}
		out = append(out, Node{Path: p, Key: st.Ino<<20 ^ uint64(st.Ctim.Nano())})
	}
	return out, nil
}

// Probe implements Devices.
func (e Evdev) Probe(path string) (DeviceInfo, error) {
	d, err := evdev.OpenWithFlags(path, os.O_RDONLY)
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("input: %w", err)
	}
	defer d.Close()
	name, err := d.Name()
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("input: %s: name: %w", path, err)
	}
	id, err := d.InputID()
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("input: %s: id: %w", path, err)
	}
	return DeviceInfo{Name: name, Vendor: id.Vendor, Product: id.Product,
		Keys: d.CapableEvents(evdev.EV_KEY), Abs: slices.Contains(d.CapableTypes(), evdev.EV_ABS)}, nil
}

// Open implements Devices.
func (e Evdev) Open(path string, grab bool) (Device, error) {
	d, err := evdev.OpenWithFlags(path, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if grab {
		if err := d.Grab(); err != nil {
			d.Close()
			return nil, fmt.Errorf("input: %s: grab: %w", path, err)
		}
	}
	// Last, because the ioctls above put the descriptor back into blocking
	// mode: non-blocking under Go's poller, Close ends a pending read.
	if err := d.NonBlock(); err != nil {
		d.Close()
		return nil, fmt.Errorf("input: %s: %w", path, err)
	}
	return d, nil
}
