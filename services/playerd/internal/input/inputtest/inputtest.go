// Package inputtest is /dev/input in memory for tests of the whole box:
// devices are plugged in and out, and an opened device types what the test
// says, as a USB keyboard (or a card reader) would.
package inputtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	evdev "github.com/holoplot/go-evdev"

	"github.com/storybox/storybox/services/playerd/internal/input"
)

// Devices implements input.Devices.
type Devices struct {
	mu      sync.Mutex
	nodes   map[string]*node
	nextKey uint64
	changed chan struct{} // closed and replaced when a device opens or goes
}

type node struct {
	key  uint64
	info input.DeviceInfo
	dev  *device
}

type device struct {
	grabbed bool
	events  chan evdev.InputEvent
	closed  chan struct{}
	gone    chan struct{}
	once    sync.Once
}

// New returns an empty /dev/input.
func New() *Devices { return &Devices{nodes: map[string]*node{}, changed: make(chan struct{})} }

// The device ids of a common 125 kHz reader and of a keyboard with media
// keys.
var (
	Reader   = input.DeviceInfo{Name: "IC Reader IC Reader", Vendor: 0xffff, Product: 0x0035, Keys: keys()}
	Keyboard = input.DeviceInfo{Name: "storybox test keyboard", Vendor: 0x1234, Product: 0x5678,
		Keys: append(keys(), evdev.KEY_PLAYPAUSE, evdev.KEY_NEXTSONG, evdev.KEY_POWER)}
)

func keys() []evdev.EvCode {
	var k []evdev.EvCode
	for c := evdev.KEY_ESC; c <= evdev.KEY_KPDOT; c++ {
		k = append(k, evdev.EvCode(c))
	}
	return k
}

func (d *Devices) notify() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// Plug adds a device at path.
func (d *Devices) Plug(path string, info input.DeviceInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextKey++
	d.nodes[path] = &node{key: d.nextKey, info: info}
}

// Unplug removes the device at path: an open one fails its reads with
// ENODEV, as the kernel's does.
func (d *Devices) Unplug(path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := d.nodes[path]; n != nil && n.dev != nil {
		close(n.dev.gone)
	}
	delete(d.nodes, path)
	d.notify()
}

// List implements input.Devices.
func (d *Devices) List() ([]input.Node, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []input.Node
	for p, n := range d.nodes {
		out = append(out, input.Node{Path: p, Key: n.key})
	}
	return out, nil
}

// Probe implements input.Devices.
func (d *Devices) Probe(path string) (input.DeviceInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := d.nodes[path]; n != nil {
		return n.info, nil
	}
	return input.DeviceInfo{}, syscall.ENODEV
}

// Open implements input.Devices.
func (d *Devices) Open(path string, grab bool) (input.Device, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.nodes[path]
	if n == nil {
		return nil, syscall.ENODEV
	}
	n.dev = &device{grabbed: grab, events: make(chan evdev.InputEvent, 1024), closed: make(chan struct{}), gone: make(chan struct{})}
	d.notify()
	return n.dev, nil
}

// open waits until the device at path is open, and returns it.
func (d *Devices) open(ctx context.Context, path string) (*device, error) {
	for {
		d.mu.Lock()
		n, changed := d.nodes[path], d.changed
		d.mu.Unlock()
		if n != nil && n.dev != nil {
			select {
			case <-n.dev.closed:
			default:
				return n.dev, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("inputtest: %s was not opened: %w", path, ctx.Err())
		}
	}
}

// Grabbed tells whether the open device at path was grabbed.
func (d *Devices) Grabbed(ctx context.Context, path string) (bool, error) {
	dev, err := d.open(ctx, path)
	if err != nil {
		return false, err
	}
	return dev.grabbed, nil
}

// Type waits until the device at path is open and types text (digits and
// capital letters, on a US keyboard), and Enter unless it is left out.
func (d *Devices) Type(ctx context.Context, path, text string, enter bool) error {
	dev, err := d.open(ctx, path)
	if err != nil {
		return err
	}
	var codes []evdev.EvCode
	for _, c := range text {
		code, ok := keyOf(c)
		if !ok {
			return fmt.Errorf("inputtest: no key for %q", c)
		}
		codes = append(codes, code)
	}
	if enter {
		codes = append(codes, evdev.KEY_ENTER)
	}
	for _, c := range codes {
		dev.key(c, 1)
		dev.key(c, 0)
	}
	return nil
}

// Key presses (down) or releases a key on the open device at path.
func (d *Devices) Key(ctx context.Context, path string, code evdev.EvCode, down bool) error {
	dev, err := d.open(ctx, path)
	if err != nil {
		return err
	}
	v := int32(0)
	if down {
		v = 1
	}
	dev.key(code, v)
	return nil
}

func (dev *device) key(code evdev.EvCode, v int32) {
	tv := syscall.NsecToTimeval(time.Now().UnixNano())
	dev.events <- evdev.InputEvent{Time: tv, Type: evdev.EV_KEY, Code: code, Value: v}
	dev.events <- evdev.InputEvent{Time: tv, Type: evdev.EV_SYN, Code: evdev.SYN_REPORT}
}

func keyOf(c rune) (evdev.EvCode, bool) {
	switch {
	case c == '0':
		return evdev.KEY_0, true
	case c >= '1' && c <= '9':
		return evdev.KEY_1 + evdev.EvCode(c-'1'), true
	}
	for i, l := range "QWERTYUIOP" {
		if c == l {
			return evdev.KEY_Q + evdev.EvCode(i), true
		}
	}
	for i, l := range "ASDFGHJKL" {
		if c == l {
			return evdev.KEY_A + evdev.EvCode(i), true
		}
	}
	for i, l := range "ZXCVBNM" {
		if c == l {
			return evdev.KEY_Z + evdev.EvCode(i), true
		}
	}
	return 0, false
}

// ReadOne implements input.Device.
func (dev *device) ReadOne() (*evdev.InputEvent, error) {
	select {
	case <-dev.closed:
		return nil, errClosed
	default:
	}
	select {
	case ev := <-dev.events:
		return &ev, nil
	case <-dev.gone:
		return nil, syscall.ENODEV
	case <-dev.closed:
		return nil, errClosed
	}
}

var errClosed = errors.New("inputtest: device closed")

// Close implements input.Device.
func (dev *device) Close() error {
	dev.once.Do(func() { close(dev.closed) })
	return nil
}
