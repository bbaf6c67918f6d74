package input

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	evdev "github.com/holoplot/go-evdev"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/chime"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/wiring"
)

// CardSink receives the ids card readers type (the cards service).
type CardSink interface {
	Card(ctx context.Context, id, device string)
}

// Commander is the one command path (the player's Do) and the status the
// switches of shuffle and repeat go on from.
type Commander interface {
	Status() player.Status
	Do(ctx context.Context, cmd player.Command) (player.Status, error)
}

// Roles of a claimed input device.
const (
	RoleReader = "reader" // a card reader: grabbed, read as card ids
	RoleKeys   = "keys"   // media keys: read, not grabbed
)

// Options configure a Manager. Wiring and Player are required.
type Options struct {
	Wiring *wiring.Store
	// Devices are the evdev devices; nil: no readers and no media keys.
	Devices Devices
	// GPIO opens the button lines; nil: no GPIO buttons.
	GPIO   GPIOOpener
	Cards  CardSink // nil: card readers are not claimed
	Player Commander
	// Chime plays the gentle sound when a button's action is refused.
	Chime func(ctx context.Context, s chime.Sound) error
	// PowerOff is the long-press power action; nil: the action does nothing.
	PowerOff func()
	// ToggleCalm switches the settings' calm mode over (the calm button);
	// nil: the button is refused.
	ToggleCalm func(ctx context.Context) error
	// OnDevice hears devices claimed and released, for the log.
	OnDevice func(d DeviceStatus, connected bool)
	// OnJack hears the headphone jack-detect line (wiring.Jack): whether
	// one is wired, and whether a plug is in. Unread (no line, or its
	// lines failed) counts as no plug. Nil: the line is not read.
	OnJack func(wired, in bool)
	// OnError hears failures that do not stop anything, for the log.
	OnError func(error)
	// Rescan is how often /dev/input is looked at for new devices;
	// default 1 s.
	Rescan time.Duration
	// GPIORetry is the wait before opening the button lines again after a
	// failure; default 5 s.
	GPIORetry time.Duration
	Now       func() time.Time
}

// Manager runs the inputs with the current wiring and applies a new wiring
// at once. Its methods are safe for concurrent use.
type Manager struct {
	o Options
}

// New prepares a manager; Run starts it.
func New(o Options) (*Manager, error) {
	if o.Wiring == nil || o.Player == nil {
		return nil, errors.New("input: Wiring and Player are required")
	}
	if o.Rescan <= 0 {
		o.Rescan = time.Second
	}
	if o.GPIORetry <= 0 {
		o.GPIORetry = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.OnError == nil {
		o.OnError = func(error) {}
	}
	return &Manager{o: o}, nil
}

// Status returns the claimed devices and the buttons' state, as the
// manager reported them to the wiring's store.
func (m *Manager) Status() Status { return m.o.Wiring.Status() }

// Run reads the inputs until ctx ends; a new wiring restarts them.
func (m *Manager) Run(ctx context.Context) error {
	// A change before the start is in the wiring the first run reads.
	select {
	case <-m.o.Wiring.Changed():
	default:
	}
	for {
		gen, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); m.runWiring(gen, m.o.Wiring.Get()) }()
		select {
		case <-ctx.Done():
			cancel()
			<-done
			return nil
		case <-m.o.Wiring.Changed():
			cancel()
			<-done
		}
	}
}

// runWiring runs one wiring: the device watcher, the GPIO lines and the
// button machine they feed, until ctx ends.
func (m *Manager) runWiring(ctx context.Context, w Wiring) {
	edges := make(chan edge, 32)
	var wg sync.WaitGroup
	wg.Go(func() { m.watch(ctx, w, edges) })
	wg.Go(func() { m.readGPIO(ctx, w, edges) })
	m.buttons(ctx, w, edges)
	wg.Wait()
}

// buttons owns the button machine.
func (m *Manager) buttons(ctx context.Context, w Wiring, edges <-chan edge) {
	mach := newMachine(w, func(a string) { m.act(ctx, w, a) })
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Stop()
		if t, ok := mach.next(); ok {
			timer.Reset(max(t.Sub(m.o.Now()), 0))
		}
		select {
		case <-ctx.Done():
			return
		case e := <-edges:
			mach.edge(e)
			mach.tick(m.o.Now())
		case <-timer.C:
			mach.tick(m.o.Now())
		}
	}
}

// act carries out a button action through the command path; a refusal
// gets the gentle sound.
func (m *Manager) act(ctx context.Context, w Wiring, action string) {
	if action == BtnPowerOff {
		if m.o.PowerOff != nil {
			m.o.PowerOff()
		}
		return
	}
	ctx, cancel := context.WithTimeout(auth.WithCaller(ctx, auth.Caller{Via: auth.Button}), 3*time.Second)
	defer cancel()
	var err error
	if action == BtnCalm {
		err = m.toggleCalm(ctx)
	} else {
		_, err = m.o.Player.Do(ctx, m.command(w, action))
	}
	if err != nil && ctx.Err() == nil {
		if m.o.Chime != nil {
			if err := m.o.Chime(ctx, chime.Refused); err != nil && ctx.Err() == nil {
				m.o.OnError(err)
			}
		}
	}
}

// command is the player command of a button action. A button has no
// value: shuffle switches over and repeat goes on to the next setting,
// from the player's status as the press finds it.
func (m *Manager) command(w Wiring, action string) player.Command {
	step := func(v float64) player.Command {
		a := player.ActVolumeDelta
		if action == BtnSeekBack || action == BtnSeekForward {
			a = player.ActSeekDelta
		}
		return player.Command{Action: a, Value: &v}
	}
	switch action {
	case BtnVolumeUp:
		return step(float64(w.VolumeStep))
	case BtnVolumeDown:
		return step(-float64(w.VolumeStep))
	case BtnSeekForward:
		return step(wiring.SeekStep)
	case BtnSeekBack:
		return step(-wiring.SeekStep)
	case BtnShuffle:
		on := !m.o.Player.Status().Shuffle
		return player.Command{Action: player.ActShuffle, On: &on}
	case BtnRepeat:
		next := map[string]string{player.RepeatOff: player.RepeatFolder, player.RepeatFolder: player.RepeatTrack}[m.o.Player.Status().Repeat]
		return player.Command{Action: player.ActRepeat, Word: cmp.Or(next, player.RepeatOff)}
	}
	return player.Command{Action: action}
}

func (m *Manager) toggleCalm(ctx context.Context) error {
	if m.o.ToggleCalm == nil {
		return fault.New(fault.Unavailable, "calm mode cannot be switched on this box")
	}
	return m.o.ToggleCalm(ctx)
}

// claim is a device the watcher holds.
type claim struct {
	node Node
	dev  Device
	st   DeviceStatus
}

// classify decides what a device is to the box: a reader, media keys, or
// nothing (left alone, never opened again while it stays).
func (m *Manager) classify(info DeviceInfo, w Wiring) string {
	if m.o.Cards != nil {
		for _, r := range w.Readers {
			if r.Matches(info.Name, info.Vendor, info.Product) {
				return RoleReader
			}
		}
	}
	if w.MediaKeys && !info.Abs {
		for _, k := range info.Keys {
			if _, ok := mediaKeys[k]; ok {
				return RoleKeys
			}
		}
	}
	return ""
}

// watch claims matching devices as they appear and lets go of them as
// they vanish. Unplugging a reader ends its read with an error; the next
// scan finds it again when it is back.
func (m *Manager) watch(ctx context.Context, w Wiring, edges chan<- edge) {
	if m.o.Devices == nil {
		return
	}
	claimed := map[string]*claim{}
	passed := map[string]uint64{} // path → node key of devices left alone
	failed := map[string]uint64{} // path → node key whose open failed, reported once
	gone := make(chan *claim, 8)
	var readers sync.WaitGroup
	var listErr string // why the devices cannot be listed, if they cannot
	var release func(c *claim)
	defer func() {
		for _, c := range claimed {
			release(c)
		}
		readers.Wait()
		m.setDevices(nil, "")
	}()
	release = func(c *claim) {
		if claimed[c.node.Path] != c {
			return
		}
		delete(claimed, c.node.Path)
		c.dev.Close()
		m.setDevices(claimed, listErr)
		if m.o.OnDevice != nil {
			m.o.OnDevice(c.st, false)
		}
	}
	scan := func() {
		nodes, err := m.o.Devices.List()
		if err != nil {
			listErr = err.Error()
			m.setDevices(claimed, listErr)
			return
		}
		listErr = ""
		present := map[string]bool{}
		for _, n := range nodes {
			present[n.Path] = true
			if c := claimed[n.Path]; c != nil {
				if c.node.Key == n.Key {
					continue
				}
				release(c) // a new device behind the old path
			}
			if k, ok := passed[n.Path]; ok && k == n.Key {
				continue
			}
			info, err := m.o.Devices.Probe(n.Path)
			if err != nil {
				continue // gone again, or not ready: the next scan tries again
			}
			role := m.classify(info, w)
			if role == "" {
				passed[n.Path] = n.Key
				continue
			}
			dev, err := m.o.Devices.Open(n.Path, role == RoleReader)
			if err != nil {
				if k, ok := failed[n.Path]; !ok || k != n.Key {
					failed[n.Path] = n.Key
					m.o.OnError(fmt.Errorf("input: %s %q: %w", role, info.Name, err))
				}
				continue
			}
			delete(failed, n.Path)
			c := &claim{node: n, dev: dev, st: DeviceStatus{Path: n.Path, Name: info.Name,
				Vendor: fmt.Sprintf("%04x", info.Vendor), Product: fmt.Sprintf("%04x", info.Product), Role: role, Since: m.o.Now()}}
			claimed[n.Path] = c
			m.setDevices(claimed, listErr)
			readers.Go(func() {
				if role == RoleReader {
					m.readCards(ctx, c)
				} else {
					m.readKeys(ctx, c, edges)
				}
				select {
				case gone <- c:
				case <-ctx.Done():
				}
			})
			if m.o.OnDevice != nil {
				m.o.OnDevice(c.st, true)
			}
		}
		for p := range passed {
			if !present[p] {
				delete(passed, p)
			}
		}
		for p := range failed {
			if !present[p] {
				delete(failed, p)
			}
		}
		m.setDevices(claimed, listErr)
	}
	ticker := time.NewTicker(m.o.Rescan)
	defer ticker.Stop()
	scan()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			scan()
		case c := <-gone:
			release(c)
			scan()
		}
	}
}

func (m *Manager) setDevices(claimed map[string]*claim, listErr string) {
	devs := []DeviceStatus{}
	for _, c := range claimed {
		devs = append(devs, c.st)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].Path < devs[j].Path })
	m.o.Wiring.ReportDevices(devs, listErr)
}

// readCards reads one reader until it fails (unplugged, or closed). A
// number cut off by the unplug dies with the decoder.
func (m *Manager) readCards(ctx context.Context, c *claim) {
	var dec cardDecoder
	start := time.Now() // the reads' monotonic clock
	for {
		ev, err := c.dev.ReadOne()
		if err != nil {
			return
		}
		if id, ok := dec.feed(*ev, time.Since(start)); ok {
			m.o.Cards.Card(ctx, id, c.st.Name)
		}
	}
}

// readKeys passes media-key presses and releases on to the button machine.
func (m *Manager) readKeys(ctx context.Context, c *claim, edges chan<- edge) {
	for {
		ev, err := c.dev.ReadOne()
		if err != nil {
			return
		}
		if ev.Type != evdev.EV_KEY || ev.Value == 2 { // auto-repeat
			continue
		}
		if _, ok := mediaKeys[ev.Code]; !ok {
			continue
		}
		select {
		case edges <- edge{src: source{code: int(ev.Code)}, down: ev.Value == 1, at: m.o.Now()}:
		case <-ctx.Done():
			return
		}
	}
}

// lineOffsets are the GPIO lines a wiring uses, in its order: the
// buttons', then the jack's.
func lineOffsets(w Wiring, jack bool) []int {
	var out []int
	for _, b := range w.GPIO.Buttons {
		out = append(out, b.Line)
	}
	if jack {
		out = append(out, w.GPIO.Jack.Line)
	}
	return out
}

// jackEdge hands the jack's line to OnJack rather than to the buttons;
// the kernel has debounced it (gpio.debounce_ms).
func (m *Manager) jackEdge(w Wiring, offset int, active bool) bool {
	j := w.GPIO.Jack
	if j == nil || m.o.OnJack == nil || offset != j.Line {
		return false
	}
	m.o.OnJack(true, j.PlugIn(active))
	return true
}

func (m *Manager) setGPIO(g GPIOStatus) {
	m.o.Wiring.ReportGPIO(g)
}

// readGPIO reads the button lines, opening them again after a failure.
func (m *Manager) readGPIO(ctx context.Context, w Wiring, edges chan<- edge) {
	jack := w.GPIO.Jack != nil && m.o.OnJack != nil && m.o.GPIO != nil
	if m.o.OnJack != nil && !jack {
		// A wired jack is told once its line is read: a new wiring
		// does not blip the headphones off and on.
		m.o.OnJack(false, false)
	}
	offsets := lineOffsets(w, jack)
	if len(offsets) == 0 || m.o.GPIO == nil {
		m.setGPIO(GPIOStatus{State: "off", Lines: []int{}})
		return
	}
	defer m.setGPIO(GPIOStatus{State: "off", Lines: []int{}})
	var lastErr string
	for {
		err := m.readLines(ctx, w, offsets, edges)
		if ctx.Err() != nil {
			return
		}
		if err.Error() != lastErr {
			lastErr = err.Error()
			m.o.OnError(err)
		}
		m.setGPIO(GPIOStatus{State: "error", Lines: slices.Clone(offsets), Error: err.Error()})
		if jack {
			m.o.OnJack(true, false)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(m.o.GPIORetry):
		}
	}
}

// readLines opens the lines once and reads them until they fail or ctx
// ends.
func (m *Manager) readLines(ctx context.Context, w Wiring, offsets []int, edges chan<- edge) error {
	lines, chip, err := m.o.GPIO.Open(w.GPIO, offsets)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { lines.Close() })
	defer func() {
		if stop() {
			lines.Close()
		}
	}()
	levels, err := lines.Values()
	if err != nil {
		return err
	}
	now := m.o.Now()
	for i, o := range offsets {
		if m.jackEdge(w, o, levels[i]) {
			continue
		}
		select {
		case edges <- edge{src: source{gpio: true, code: o}, down: levels[i], at: now, init: true}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.setGPIO(GPIOStatus{State: "ok", Chip: chip, Lines: slices.Clone(offsets)})
	for {
		ev, err := lines.Read()
		if err != nil {
			return err
		}
		if m.jackEdge(w, ev.Offset, ev.Active) {
			continue
		}
		select {
		case edges <- edge{src: source{gpio: true, code: ev.Offset}, down: ev.Active, at: m.o.Now()}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
