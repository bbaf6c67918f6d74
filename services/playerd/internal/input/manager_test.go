package input

import (
	"context"
	"errors"
	"github.com/storybox/storybox/services/playerd/internal/wiring"
	"sync"
	"testing"
	"time"

	evdev "github.com/holoplot/go-evdev"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/chime"
	"github.com/storybox/storybox/services/playerd/internal/input/gpio"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

const patience = 10 * time.Second // bounds a hang; nothing waits this long when it works

type bench struct {
	m       *Manager
	devs    *fakeDevices
	chip    *fakeChip
	rec     *recorder
	events  chan string // "+path role" / "-path"
	sounds  chan chime.Sound
	powered chan struct{}
	errs    chan error
	stop    func()
}

var (
	readerInfo = DeviceInfo{Name: "IC Reader IC Reader", Vendor: 0xffff, Product: 0x0035,
		Keys: []evdev.EvCode{evdev.KEY_1, evdev.KEY_ENTER, evdev.KEY_VOLUMEUP}}
	keyboardInfo = DeviceInfo{Name: "Logitech USB Keyboard", Vendor: 0x046d, Product: 0xc31c,
		Keys: []evdev.EvCode{evdev.KEY_1, evdev.KEY_ENTER, evdev.KEY_PLAYPAUSE, evdev.KEY_POWER}}
	touchInfo = DeviceInfo{Name: "ft5x06", Keys: []evdev.EvCode{evdev.BTN_TOUCH, evdev.KEY_POWER}, Abs: true}
	mouseInfo = DeviceInfo{Name: "USB Mouse", Keys: []evdev.EvCode{evdev.BTN_LEFT}}
)

func startBench(t *testing.T, w Wiring) *bench {
	t.Helper()
	store, err := wiring.Load(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(w); err != nil {
		t.Fatal(err)
	}
	b := &bench{devs: newFakeDevices(), chip: &fakeChip{levels: map[int]bool{}, opened: make(chan *fakeLines, 8)},
		rec: newRecorder(), events: make(chan string, 32), sounds: make(chan chime.Sound, 8),
		powered: make(chan struct{}, 4), errs: make(chan error, 16)}
	b.m, err = New(Options{Wiring: store, Devices: b.devs, GPIO: b.chip, Cards: b.rec, Player: b.rec,
		Chime:    func(_ context.Context, s chime.Sound) error { b.sounds <- s; return nil },
		PowerOff: func() { b.powered <- struct{}{} },
		OnDevice: func(d DeviceStatus, up bool) {
			if up {
				b.events <- "+" + d.Path + " " + d.Role
			} else {
				b.events <- "-" + d.Path
			}
		},
		OnError: func(err error) { b.errs <- err },
		Rescan:  5 * time.Millisecond, GPIORetry: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); b.m.Run(ctx) }()
	b.stop = func() { cancel(); <-done }
	t.Cleanup(b.stop)
	return b
}

func want[T comparable](t *testing.T, c <-chan T, v T) {
	t.Helper()
	select {
	case got := <-c:
		if got != v {
			t.Fatalf("got %v, want %v", got, v)
		}
	case <-time.After(patience):
		t.Fatalf("waited in vain for %v", v)
	}
}

func opened(t *testing.T, d *fakeDevices) *fakeDev {
	t.Helper()
	select {
	case dev := <-d.opened:
		return dev
	case <-time.After(patience):
		t.Fatal("no device was opened")
	}
	return nil
}

// The reader is grabbed and read; a keyboard is read for media keys only,
// not grabbed; a touch screen and a mouse are left alone.
func TestDevicesClaimedByRole(t *testing.T) {
	b := startBench(t, wiring.Default())
	b.devs.plug("/dev/input/event1", touchInfo)
	b.devs.plug("/dev/input/event2", mouseInfo)
	b.devs.plug("/dev/input/event3", readerInfo)
	want(t, b.events, "+/dev/input/event3 reader")
	reader := opened(t, b.devs)
	if !reader.grabbed || reader.path != "/dev/input/event3" {
		t.Errorf("reader opened as %+v", reader)
	}
	b.devs.plug("/dev/input/event4", keyboardInfo)
	want(t, b.events, "+/dev/input/event4 keys")
	kbd := opened(t, b.devs)
	if kbd.grabbed {
		t.Error("the keyboard was grabbed")
	}
	st := b.m.Status()
	if len(st.Devices) != 2 || st.Devices[0].Vendor != "ffff" || st.Devices[0].Product != "0035" || st.Devices[1].Role != RoleKeys {
		t.Errorf("status %+v", st.Devices)
	}
	// Left-alone devices are probed once, not at every scan.
	b.devs.mu.Lock()
	probes := b.devs.probes
	b.devs.mu.Unlock()
	b.devs.plug("/dev/input/event5", mouseInfo)
	b.devs.waitScans(t, 3)
	if n := b.devs.probesNow(); n != probes+1 {
		t.Errorf("%d probes after plugging one device, want %d", n-probes, 1)
	}

	// Digits typed on the keyboard are no card.
	kbd.feed(newTypist().text(layout("us"), "1234").enter().evs)
	reader.feed(newTypist().text(layout("de"), "0004921380").enter().evs)
	want(t, b.rec.cards, "IC Reader IC Reader:0004921380")
	select {
	case c := <-b.rec.cards:
		t.Errorf("another card: %s", c)
	default:
	}
}

// waitScans returns once the watcher has listed the devices n more times.
func (f *fakeDevices) waitScans(t *testing.T, n int) {
	t.Helper()
	f.mu.Lock()
	target := f.lists + n
	f.mu.Unlock()
	deadline := time.Now().Add(patience)
	for {
		f.mu.Lock()
		done := f.lists >= target
		f.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher stopped scanning")
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *fakeDevices) probesNow() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.probes
}

// A reader unplugged in the middle of a number, and plugged in again: the
// broken number is dropped, the reader is claimed again and the next card
// reads whole.
func TestReaderReplug(t *testing.T) {
	b := startBench(t, wiring.Default())
	b.devs.plug("/dev/input/event3", readerInfo)
	want(t, b.events, "+/dev/input/event3 reader")
	first := opened(t, b.devs)
	ty := newTypist().text(layout("us"), "00049")
	first.feed(ty.evs)
	b.devs.unplug("/dev/input/event3")
	want(t, b.events, "-/dev/input/event3")
	if n := len(b.m.Status().Devices); n != 0 {
		t.Errorf("%d devices after the unplug", n)
	}
	b.devs.plug("/dev/input/event3", readerInfo)
	want(t, b.events, "+/dev/input/event3 reader")
	second := opened(t, b.devs)
	second.feed(newTypist().text(layout("us"), "21380").enter().text(layout("us"), "0004921380").enter().evs)
	want(t, b.rec.cards, "IC Reader IC Reader:21380")
	want(t, b.rec.cards, "IC Reader IC Reader:0004921380")
	if !second.grabbed {
		t.Error("the replugged reader is not grabbed")
	}
}

func TestMediaKeys(t *testing.T) {
	w := wiring.Default()
	w.LongPressMS = 500
	b := startBench(t, w)
	b.devs.plug("/dev/input/event4", keyboardInfo)
	kbd := opened(t, b.devs)
	ty := newTypist()
	ty.tap(evdev.KEY_PLAYPAUSE, false)
	kbd.feed(ty.evs)
	want(t, b.rec.cmds, player.Command{Action: player.ActToggle})
	b.rec.mu.Lock()
	if b.rec.via[0] != auth.Button {
		t.Errorf("came as %q", b.rec.via[0])
	}
	b.rec.mu.Unlock()

	// A refused key gets the gentle sound.
	b.rec.mu.Lock()
	b.rec.refuse = fault.New(fault.Conflict, "queue is empty")
	b.rec.mu.Unlock()
	kbd.feed(ty.evs)
	want(t, b.rec.cmds, player.Command{Action: player.ActToggle})
	want(t, b.sounds, chime.Refused)

	// Power only when held: a tap does nothing, a long press powers off.
	ty = newTypist()
	ty.tap(evdev.KEY_POWER, false)
	kbd.feed(ty.evs)
	ty = newTypist()
	ty.key(evdev.KEY_POWER, 1)
	kbd.feed(ty.evs)
	want(t, b.powered, struct{}{})
	select {
	case <-b.powered:
		t.Error("powered off twice")
	default:
	}
}

func TestWiringAppliedLive(t *testing.T) {
	b := startBench(t, wiring.Default())
	b.devs.plug("/dev/input/event3", readerInfo)
	want(t, b.events, "+/dev/input/event3 reader")
	w := wiring.Default()
	w.Readers = []Match{{Name: "nothing like it"}}
	w.MediaKeys = false
	if err := b.m.o.Wiring.Put(w); err != nil {
		t.Fatal(err)
	}
	want(t, b.events, "-/dev/input/event3")
	if n := len(b.m.Status().Devices); n != 0 {
		t.Errorf("still claimed: %+v", b.m.Status().Devices)
	}
	w.Readers = []Match{{Vendor: "FFFF"}}
	if err := b.m.o.Wiring.Put(w); err != nil {
		t.Fatal(err)
	}
	want(t, b.events, "+/dev/input/event3 reader")
	w.VolumeStep = 0
	if err := b.m.o.Wiring.Put(w); fault.KindOf(err) != fault.Invalid {
		t.Errorf("bad wiring: %v", err)
	}
	if b.m.o.Wiring.Get().VolumeStep != 5 {
		t.Error("a refused wiring changed the wiring")
	}
}

func gpioWiring(buttons ...Button) Wiring {
	w := wiring.Default()
	w.GPIO.Buttons = buttons
	w.GPIO.DebounceMS = 5
	w.LongPressMS = 500
	return w
}

// A fake GPIO line through the whole input layer: a chattering press is
// one command; a held button with a long action powers off and its release
// does nothing more. Each check ends with a press of another button, so a
// command that should not have come would arrive before it.
func TestGPIOButtons(t *testing.T) {
	b := startBench(t, gpioWiring(Button{Line: 17, Action: BtnNext}, Button{Line: 22, Action: BtnStop},
		Button{Line: 27, Action: BtnToggle, LongAction: BtnPowerOff}))
	var lines *fakeLines
	select {
	case lines = <-b.chip.opened:
	case <-time.After(patience):
		t.Fatal("lines not opened")
	}
	press := func(line int, levels ...bool) {
		for _, a := range levels {
			lines.events <- gpio.Event{Offset: line, Active: a}
		}
	}
	press(17, true, false, true, false, true)
	want(t, b.rec.cmds, player.Command{Action: player.ActNext})
	press(22, true)
	want(t, b.rec.cmds, player.Command{Action: player.ActStop})
	press(17, false)
	press(22, false)

	press(27, true)
	want(t, b.powered, struct{}{})
	press(27, false)
	press(22, true)
	want(t, b.rec.cmds, player.Command{Action: player.ActStop})
	if st := b.m.Status().GPIO; st.State != "ok" || len(st.Lines) != 3 || st.Chip != "fake (auto)" {
		t.Errorf("gpio status %+v", st)
	}
}

// Lines that cannot be opened are reported once and tried again; a button
// held when its line is first read does nothing until pressed anew.
func TestGPIORetried(t *testing.T) {
	store, _ := wiring.Load(t.TempDir(), nil)
	w := gpioWiring(Button{Line: 4, Action: BtnStop})
	w.GPIO.DebounceMS = 0
	if err := store.Put(w); err != nil {
		t.Fatal(err)
	}
	chip := &fakeChip{fail: errors.New("gpio: no chip \"auto\""), levels: map[int]bool{4: true}, opened: make(chan *fakeLines, 4)}
	errs := make(chan error, 8)
	rec := newRecorder()
	m, _ := New(Options{Wiring: store, GPIO: chip, Player: rec, OnError: func(err error) { errs <- err },
		GPIORetry: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	select {
	case err := <-errs:
		if err.Error() != `gpio: no chip "auto"` {
			t.Errorf("error %v", err)
		}
	case <-time.After(patience):
		t.Fatal("no error reported")
	}
	for deadline := time.Now().Add(patience); m.Status().GPIO.State != "error"; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gpio status %+v", m.Status().GPIO)
		}
	}
	chip.mu.Lock()
	chip.fail = nil
	chip.mu.Unlock()
	lines := <-chip.opened
	lines.events <- gpio.Event{Offset: 4, Active: false}
	lines.events <- gpio.Event{Offset: 4, Active: true}
	want(t, rec.cmds, player.Command{Action: player.ActStop})
	select {
	case err := <-errs:
		t.Errorf("the same error twice, or another: %v", err)
	default:
	}
}
