// Package wiring is how card readers, media keys and GPIO buttons are
// wired (input.json, part of the backup) and what the readers and buttons
// surface found connected under it. The core keeps both: the admin API
// reads and changes the wiring here, and the surface (package input)
// follows each change and reports what it claimed, so neither calls the
// other.
package wiring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// FileName is the input wiring in the data directory: which devices
// are card readers, media keys, GPIO buttons. Part of the backup.
const FileName = "input.json"

// Version is the layout of input.json this box writes and reads.
const Version = 1

// Biases of the GPIO lines: the kernel's pull-up, pull-down, or none.
const (
	PullUp   = "pull-up"
	PullDown = "pull-down"
	NoBias   = "disabled"
)

// Button actions, for GPIO buttons (and the fixed media keys).
const (
	BtnToggle     = "toggle"
	BtnPlay       = "play"
	BtnPause      = "pause"
	BtnStop       = "stop"
	BtnNext       = "next"
	BtnPrevious   = "previous"
	BtnVolumeUp   = "volume_up"
	BtnVolumeDown = "volume_down"
	// BtnPowerOff switches the box off. Only as a long press: a child
	// leaning on the box must not end the story.
	BtnPowerOff = "power_off"
	// The play modes' buttons (issue 36): a button has no value, so
	// shuffle and calm switch over, repeat goes off, folder, track, off,
	// and the seeks are the audiobook skip of SeekStep seconds.
	BtnShuffle     = "shuffle"
	BtnRepeat      = "repeat"
	BtnSeekBack    = "seek_back"
	BtnSeekForward = "seek_forward"
	BtnCalm        = "calm"
)

// SeekStep is the seconds of a seek button.
const SeekStep = 10

var buttonActions = []string{BtnToggle, BtnPlay, BtnPause, BtnStop, BtnNext, BtnPrevious, BtnVolumeUp, BtnVolumeDown, BtnPowerOff,
	BtnShuffle, BtnRepeat, BtnSeekBack, BtnSeekForward, BtnCalm}

// Wiring is input.json.
type Wiring struct {
	Version int `json:"version"`
	// Readers says which input devices are card readers: a device matching
	// any entry is grabbed (its keys go nowhere else) and read as one.
	Readers []Match `json:"readers"`
	// MediaKeys: play/pause, next, previous, stop, volume and power keys
	// of USB and Bluetooth keyboards and remotes (and of the kernel's
	// gpio-keys) act on the player.
	MediaKeys bool `json:"media_keys"`
	// VolumeStep is the volume change of a volume key or button.
	VolumeStep int `json:"volume_step"`
	// LongPressMS is how long a button is held for its long action.
	LongPressMS int  `json:"long_press_ms"`
	GPIO        GPIO `json:"gpio"`
}

// Match picks input devices by name or USB id.
type Match struct {
	// Name matches when the device's name contains it (any case).
	Name string `json:"name,omitempty"`
	// Vendor and Product are USB ids, 4 hex digits; Product may be left
	// out to take every device of the vendor.
	Vendor  string `json:"vendor,omitempty"`
	Product string `json:"product,omitempty"`
}

// GPIO is the buttons wired to GPIO lines of one chip.
type GPIO struct {
	// Chip is "auto" (the Raspberry Pi's pin header), a /dev/gpiochipN
	// path, a chip name or a chip label.
	Chip string `json:"chip"`
	// ActiveLow: pressing pulls the line to ground (the usual wiring, with
	// the pull-up of Bias).
	ActiveLow  bool     `json:"active_low"`
	Bias       string   `json:"bias"`
	DebounceMS int      `json:"debounce_ms"`
	Buttons    []Button `json:"buttons"`
	// Jack is the headphone jack-detect line (jack.go); nil: none.
	Jack *Jack `json:"jack"`
}

// Button is one GPIO line and what a press does.
type Button struct {
	Line       int    `json:"line"` // the line offset on the chip: BCM GPIO numbers on a Pi
	Action     string `json:"action,omitempty"`
	LongAction string `json:"long_action,omitempty"`
}

// UnmarshalJSON reads a button whole, line required: a button without one
// would otherwise be line 0, or keep the line of the button it replaces.
func (b *Button) UnmarshalJSON(data []byte) error {
	var v struct {
		Line       *int   `json:"line"`
		Action     string `json:"action"`
		LongAction string `json:"long_action"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if v.Line == nil {
		return invalid("gpio.buttons: every button needs its line")
	}
	*b = Button{Line: *v.Line, Action: v.Action, LongAction: v.LongAction}
	return nil
}

// DefaultReaders are the readers the box was designed against: cheap USB
// readers that act as keyboards. 125 kHz EM4100 readers "IC Reader IC
// Reader" (ffff:0035, also sold as Sycreader, YARONGTECH, "USB RFID
// Reader") and "Sycreader RFID Technology Co., Ltd SYC ID&IC USB Reader"
// (08ff:0009) type ten decimal digits and Enter; 13.56 MHz MIFARE readers
// on the shared V-USB id 16c0:27db type the UID in decimal or hex. Names
// with RFID, NFC or "reader" in them catch most other brands.
func DefaultReaders() []Match {
	return []Match{
		{Name: "RFID"}, {Name: "NFC"}, {Name: "IC Reader"}, {Name: "ID Reader"}, {Name: "Card Reader"},
		{Vendor: "ffff", Product: "0035"}, {Vendor: "08ff", Product: "0009"}, {Vendor: "16c0", Product: "27db"},
	}
}

// Default is input.json before a parent saved one: the known
// readers, media keys on, no GPIO buttons (their lines differ per box).
func Default() Wiring {
	return Wiring{Version: Version, Readers: DefaultReaders(), MediaKeys: true, VolumeStep: 5, LongPressMS: 3000,
		GPIO: GPIO{Chip: "auto", ActiveLow: true, Bias: PullUp, DebounceMS: 20, Buttons: []Button{}}}
}

// Limits of the document.
const (
	maxMatches = 16
	maxButtons = 16
	maxLine    = 511
)

func (w Wiring) clone() Wiring {
	c := w
	c.Readers = append([]Match{}, w.Readers...)
	c.GPIO.Buttons = append([]Button{}, w.GPIO.Buttons...)
	if w.GPIO.Jack != nil {
		j := *w.GPIO.Jack
		c.GPIO.Jack = &j
	}
	return c
}

func invalid(format string, a ...any) error { return fault.New(fault.Invalid, format, a...) }

// Validate checks the wiring.
func (w Wiring) Validate() error {
	if w.Version != Version {
		return invalid("version must be %d, not %d", Version, w.Version)
	}
	if len(w.Readers) > maxMatches {
		return invalid("readers: at most %d entries", maxMatches)
	}
	for i, m := range w.Readers {
		if err := m.validate(); err != nil {
			return invalid("readers[%d]: %s", i, fault.Message(err))
		}
	}
	if w.VolumeStep < 1 || w.VolumeStep > 25 {
		return invalid("volume_step must be 1..25")
	}
	if w.LongPressMS < 500 || w.LongPressMS > 10000 {
		return invalid("long_press_ms must be 500..10000")
	}
	g := w.GPIO
	if g.Chip == "" || len(g.Chip) > 64 || strings.IndexFunc(g.Chip, unicode.IsControl) >= 0 {
		return invalid(`gpio.chip must be "auto", a /dev/gpiochipN path, a chip name or label`)
	}
	switch g.Bias {
	case PullUp, PullDown, NoBias:
	default:
		return invalid("gpio.bias must be %q, %q or %q", PullUp, PullDown, NoBias)
	}
	if g.DebounceMS < 0 || g.DebounceMS > 1000 {
		return invalid("gpio.debounce_ms must be 0..1000")
	}
	if len(g.Buttons) > maxButtons {
		return invalid("gpio.buttons: at most %d", maxButtons)
	}
	lines := map[int]bool{}
	for i, b := range g.Buttons {
		if b.Line < 0 || b.Line > maxLine {
			return invalid("gpio.buttons[%d]: line must be 0..%d", i, maxLine)
		}
		if lines[b.Line] {
			return invalid("gpio.buttons[%d]: line %d is used twice", i, b.Line)
		}
		lines[b.Line] = true
		if b.Action == "" && b.LongAction == "" {
			return invalid("gpio.buttons[%d]: action or long_action is required", i)
		}
		for _, a := range []string{b.Action, b.LongAction} {
			if a != "" && !isButtonAction(a) {
				return invalid("gpio.buttons[%d]: unknown action %q (want %s)", i, a, strings.Join(buttonActions, ", "))
			}
		}
		if b.Action == BtnPowerOff {
			return invalid("gpio.buttons[%d]: power_off only as long_action", i)
		}
	}
	return g.checkJack(lines)
}

func isButtonAction(a string) bool {
	for _, b := range buttonActions {
		if a == b {
			return true
		}
	}
	return false
}

func (m Match) validate() error {
	if m.Name == "" && m.Vendor == "" {
		return invalid("name or vendor is required")
	}
	if len(m.Name) > 80 || strings.IndexFunc(m.Name, unicode.IsControl) >= 0 {
		return invalid("name must be text of at most 80 characters")
	}
	if m.Product != "" && m.Vendor == "" {
		return invalid("product needs vendor")
	}
	for _, h := range []string{m.Vendor, m.Product} {
		if h == "" {
			continue
		}
		if _, err := strconv.ParseUint(h, 16, 16); err != nil || len(h) != 4 {
			return invalid("vendor and product are 4 hex digits, not %q", h)
		}
	}
	return nil
}

// Matches reports whether a device with this name and USB id is meant.
func (m Match) Matches(name string, vendor, product uint16) bool {
	if m.Name != "" && !strings.Contains(strings.ToLower(name), strings.ToLower(m.Name)) {
		return false
	}
	if m.Vendor != "" {
		if v, _ := strconv.ParseUint(m.Vendor, 16, 16); uint16(v) != vendor {
			return false
		}
		if m.Product != "" {
			if p, _ := strconv.ParseUint(m.Product, 16, 16); uint16(p) != product {
				return false
			}
		}
	}
	return true
}

// Parse decodes and validates input.json; unknown fields, trailing
// data and missing fields are refused.
func Parse(data []byte) (Wiring, error) {
	var raw struct {
		Version     *int     `json:"version"`
		Readers     *[]Match `json:"readers"`
		MediaKeys   *bool    `json:"media_keys"`
		VolumeStep  *int     `json:"volume_step"`
		LongPressMS *int     `json:"long_press_ms"`
		GPIO        *GPIO    `json:"gpio"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Wiring{}, invalid("input: %v", err)
	}
	if dec.More() {
		return Wiring{}, invalid("input: trailing data")
	}
	if raw.Version == nil || raw.Readers == nil || raw.MediaKeys == nil || raw.VolumeStep == nil || raw.LongPressMS == nil || raw.GPIO == nil {
		return Wiring{}, invalid("input: version, readers, media_keys, volume_step, long_press_ms and gpio are required")
	}
	w := Wiring{Version: *raw.Version, Readers: *raw.Readers, MediaKeys: *raw.MediaKeys, VolumeStep: *raw.VolumeStep,
		LongPressMS: *raw.LongPressMS, GPIO: *raw.GPIO}
	if w.Readers == nil {
		w.Readers = []Match{}
	}
	if w.GPIO.Buttons == nil {
		w.GPIO.Buttons = []Button{}
	}
	if err := w.Validate(); err != nil {
		return Wiring{}, err
	}
	return w, nil
}

// Check validates a copy of input.json, for a restore.
func Check(data []byte) error {
	_, err := Parse(data)
	return err
}

func encode(w Wiring) ([]byte, error) {
	data, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	return append(data, '\n'), nil
}

// Store keeps input.json, written through state.WriteFile; a change
// takes effect only once it is on disk.
type Store struct {
	path    string
	changed chan struct{} // a new wiring is current: the surface applies it
	told    func()        // told of every change, once it took effect

	mu     sync.Mutex
	w      Wiring
	saved  bool
	status Status
}

// Load reads input.json from dir. A missing file gives the defaults;
// a corrupt or invalid one gives the defaults and an error to log, and
// stays on disk until the next save. told (nil: nobody) hears of every
// change from now on: a save and Reload.
func Load(dir string, told func()) (*Store, error) {
	if told == nil {
		told = func() {}
	}
	s := &Store{path: filepath.Join(dir, FileName), changed: make(chan struct{}, 1), told: told, w: Default(),
		status: Status{Devices: []DeviceStatus{}, GPIO: GPIOStatus{State: "off", Lines: []int{}}}}
	return s, s.load()
}

// Reload reads input.json again (after a restore); the inputs follow it.
func (s *Store) Reload() error {
	err := s.load()
	s.changes()
	return err
}

// Changed tells the one surface that reads the inputs that a new wiring
// is current (Put, Reload). It holds at most one signal.
func (s *Store) Changed() <-chan struct{} { return s.changed }

// changes tells the surface and everyone else. It must not block: Put
// calls it with mu held.
func (s *Store) changes() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
	s.told()
}

func (s *Store) load() error {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.mu.Lock()
		s.w, s.saved = Default(), false
		s.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	w, err := Parse(data)
	if err != nil {
		return fmt.Errorf("input: %s unusable, using the defaults: %w", FileName, err)
	}
	s.mu.Lock()
	s.w, s.saved = w, true
	s.mu.Unlock()
	return nil
}

// Get returns a copy of the wiring.
func (s *Store) Get() Wiring {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.clone()
}

// Read is the wiring as a backup holds it; nil while the defaults are in
// use.
func (s *Store) Read() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.saved {
		return nil, nil
	}
	return encode(s.w)
}

// Put validates w, writes it and then makes it current; the inputs
// follow it at once.
func (s *Store) Put(w Wiring) error {
	if err := w.Validate(); err != nil {
		return err
	}
	data, err := encode(w)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := state.WriteFile(s.path, data); err != nil {
		return fault.Wrap(fault.Internal, err, "input wiring could not be saved")
	}
	s.w, s.saved = w.clone(), true
	s.changes()
	return nil
}

// DeviceStatus is a claimed input device.
type DeviceStatus struct {
	Path    string    `json:"path"`
	Name    string    `json:"name"`
	Vendor  string    `json:"vendor"`
	Product string    `json:"product"`
	Role    string    `json:"role"`
	Since   time.Time `json:"since"`
}

// GPIOStatus tells whether the button lines are being read.
type GPIOStatus struct {
	State string `json:"state"` // off (no buttons), ok, error
	Chip  string `json:"chip,omitempty"`
	Lines []int  `json:"lines"`
	Error string `json:"error,omitempty"`
}

// Status is what the inputs claimed under the wiring, and why not.
type Status struct {
	Devices []DeviceStatus `json:"devices"`
	// DevicesError is why input devices cannot be listed (no /dev/input).
	DevicesError string     `json:"devices_error,omitempty"`
	GPIO         GPIOStatus `json:"gpio"`
}

// Status is what the inputs last reported.
func (s *Store) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.Devices = append([]DeviceStatus{}, st.Devices...)
	st.GPIO.Lines = append([]int{}, st.GPIO.Lines...)
	return st
}

// ReportDevices and ReportGPIO are how the inputs tell what they claimed.
func (s *Store) ReportDevices(devs []DeviceStatus, listErr string) {
	s.mu.Lock()
	s.status.Devices, s.status.DevicesError = append([]DeviceStatus{}, devs...), listErr
	s.mu.Unlock()
}

func (s *Store) ReportGPIO(g GPIOStatus) {
	s.mu.Lock()
	g.Lines = append([]int{}, g.Lines...)
	s.status.GPIO = g
	s.mu.Unlock()
}
