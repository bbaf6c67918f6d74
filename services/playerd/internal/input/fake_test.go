package input

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"

	evdev "github.com/holoplot/go-evdev"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/input/gpio"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// fakeDevices is /dev/input in memory: devices are plugged in and out, and
// each open device reads what the test feeds it.
type fakeDevices struct {
	mu      sync.Mutex
	nodes   map[string]*fakeNode
	nextKey uint64
	opened  chan *fakeDev
	probes  int
	lists   int
}

type fakeNode struct {
	key  uint64
	info DeviceInfo
	dev  *fakeDev // the open one, if any
}

type fakeDev struct {
	path    string
	grabbed bool
	events  chan evdev.InputEvent
	closed  chan struct{}
	once    sync.Once
	gone    chan struct{} // unplugged: reads fail with ENODEV
}

func newFakeDevices() *fakeDevices {
	return &fakeDevices{nodes: map[string]*fakeNode{}, opened: make(chan *fakeDev, 16)}
}

func (f *fakeDevices) plug(path string, info DeviceInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextKey++
	f.nodes[path] = &fakeNode{key: f.nextKey, info: info}
}

// unplug removes the node; an open device fails its reads as the kernel's
// does (ENODEV).
func (f *fakeDevices) unplug(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.nodes[path]; n != nil && n.dev != nil {
		close(n.dev.gone)
	}
	delete(f.nodes, path)
}

func (f *fakeDevices) List() ([]Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	var out []Node
	for p, n := range f.nodes {
		out = append(out, Node{Path: p, Key: n.key})
	}
	return out, nil
}

func (f *fakeDevices) Probe(path string) (DeviceInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.probes++
	n := f.nodes[path]
	if n == nil {
		return DeviceInfo{}, syscall.ENODEV
	}
	return n.info, nil
}

func (f *fakeDevices) Open(path string, grab bool) (Device, error) {
	f.mu.Lock()
	n := f.nodes[path]
	if n == nil {
		f.mu.Unlock()
		return nil, syscall.ENODEV
	}
	d := &fakeDev{path: path, grabbed: grab, events: make(chan evdev.InputEvent, 256),
		closed: make(chan struct{}), gone: make(chan struct{})}
	n.dev = d
	f.mu.Unlock()
	f.opened <- d
	return d, nil
}

func (d *fakeDev) ReadOne() (*evdev.InputEvent, error) {
	select {
	case <-d.closed:
		return nil, errors.New("closed")
	default:
	}
	select {
	case ev := <-d.events:
		return &ev, nil
	case <-d.gone:
		return nil, syscall.ENODEV
	case <-d.closed:
		return nil, errors.New("closed")
	}
}

func (d *fakeDev) Close() error {
	d.once.Do(func() { close(d.closed) })
	return nil
}

func (d *fakeDev) feed(evs []evdev.InputEvent) {
	for _, ev := range evs {
		d.events <- ev
	}
}

// fakeLines is a GPIO line request the test drives.
type fakeLines struct {
	levels []bool
	events chan gpio.Event
	closed chan struct{}
	once   sync.Once
}

func (l *fakeLines) Read() (gpio.Event, error) {
	select {
	case ev := <-l.events:
		return ev, nil
	case <-l.closed:
		return gpio.Event{}, errors.New("closed")
	}
}

func (l *fakeLines) Values() ([]bool, error) { return l.levels, nil }
func (l *fakeLines) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// fakeChip hands out fakeLines, or fails while fail is set.
type fakeChip struct {
	mu     sync.Mutex
	fail   error
	levels map[int]bool
	opened chan *fakeLines
}

func (c *fakeChip) Open(g GPIO, offsets []int) (Lines, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return nil, "", c.fail
	}
	l := &fakeLines{events: make(chan gpio.Event, 64), closed: make(chan struct{})}
	for _, o := range offsets {
		l.levels = append(l.levels, c.levels[o])
	}
	c.opened <- l
	return l, fmt.Sprintf("fake (%s)", g.Chip), nil
}

// recorder is the player and the card sink.
type recorder struct {
	mu     sync.Mutex
	status player.Status // what Status answers
	cmds   chan player.Command
	via    []auth.Via
	cards  chan string
	refuse error
}

func newRecorder() *recorder {
	return &recorder{cmds: make(chan player.Command, 64), cards: make(chan string, 64)}
}

func (r *recorder) Do(ctx context.Context, c player.Command) (player.Status, error) {
	r.mu.Lock()
	r.via = append(r.via, auth.CallerFrom(ctx).Via)
	err := r.refuse
	r.mu.Unlock()
	r.cmds <- c
	return player.Status{}, err
}

func (r *recorder) Status() player.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

func (r *recorder) Card(_ context.Context, id, device string) { r.cards <- device + ":" + id }
