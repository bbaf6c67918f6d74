package input

import (
	"strings"
	"syscall"
	"testing"
	"time"

	evdev "github.com/holoplot/go-evdev"
)

// A key map says which key (and whether Shift) a reader presses for a
// character, as the reader's firmware does for the layout it was made for.
type keyMap map[rune]struct {
	code  evdev.EvCode
	shift bool
}

var digitsRow = []evdev.EvCode{evdev.KEY_0, evdev.KEY_1, evdev.KEY_2, evdev.KEY_3, evdev.KEY_4,
	evdev.KEY_5, evdev.KEY_6, evdev.KEY_7, evdev.KEY_8, evdev.KEY_9}

func layout(name string) keyMap {
	m := keyMap{}
	for i, c := range "0123456789" {
		// AZERTY has symbols on the number row; digits need Shift.
		m[c] = struct {
			code  evdev.EvCode
			shift bool
		}{digitsRow[i], name == "fr"}
	}
	letters := map[string]string{
		// key positions of a US keyboard, and of a German one (Y and Z
		// swapped), for the letters a hex id uses and the two that move
		"us": "ABCDEFYZ",
		"de": "ABCDEFZY",
	}[name]
	codes := []evdev.EvCode{evdev.KEY_A, evdev.KEY_B, evdev.KEY_C, evdev.KEY_D, evdev.KEY_E, evdev.KEY_F, evdev.KEY_Y, evdev.KEY_Z}
	for i, c := range letters {
		m[c] = struct {
			code  evdev.EvCode
			shift bool
		}{codes[i], true}
	}
	return m
}

// hidUsage is the HID keyboard usage a USB keyboard reports in MSC_SCAN
// before each key event, as evtest shows it.
func hidUsage(code evdev.EvCode) int32 {
	switch {
	case code >= evdev.KEY_1 && code <= evdev.KEY_9:
		return 0x7001e + int32(code-evdev.KEY_1)
	case code == evdev.KEY_0:
		return 0x70027
	case code == evdev.KEY_ENTER:
		return 0x70028
	case code == evdev.KEY_LEFTSHIFT:
		return 0x700e1
	}
	return 0x70004 // letters: the value does not matter to the decoder
}

// typist produces the event stream of a USB keyboard reader typing text
// and Enter: MSC_SCAN, EV_KEY, SYN_REPORT for every press and release, a
// few milliseconds apart.
type typist struct {
	at  time.Time
	evs []evdev.InputEvent
}

func (ty *typist) ev(typ evdev.EvType, code evdev.EvCode, v int32) {
	ty.evs = append(ty.evs, evdev.InputEvent{Time: syscall.NsecToTimeval(ty.at.UnixNano()), Type: typ, Code: code, Value: v})
}

func (ty *typist) key(code evdev.EvCode, v int32) {
	ty.ev(evdev.EV_MSC, evdev.MSC_SCAN, hidUsage(code))
	ty.ev(evdev.EV_KEY, code, v)
	ty.ev(evdev.EV_SYN, evdev.SYN_REPORT, 0)
	ty.at = ty.at.Add(4 * time.Millisecond)
}

func (ty *typist) tap(code evdev.EvCode, shift bool) {
	if shift {
		ty.key(evdev.KEY_LEFTSHIFT, 1)
	}
	ty.key(code, 1)
	ty.key(code, 0)
	if shift {
		ty.key(evdev.KEY_LEFTSHIFT, 0)
	}
}

func (ty *typist) text(km keyMap, s string) *typist {
	for _, c := range s {
		k, ok := km[c]
		if !ok {
			panic("no key for " + string(c))
		}
		ty.tap(k.code, k.shift)
	}
	return ty
}

func (ty *typist) enter() *typist {
	ty.tap(evdev.KEY_ENTER, false)
	return ty
}

func newTypist() *typist { return &typist{at: time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)} }

// decodeAll decodes events read as they were stamped.
func decodeAll(evs []evdev.InputEvent) []string {
	var read []time.Duration
	for _, ev := range evs {
		read = append(read, time.Duration(syscall.TimevalToNsec(ev.Time)-syscall.TimevalToNsec(evs[0].Time)))
	}
	return decodeRead(evs, read)
}

// decodeRead decodes events read at the given monotonic times.
func decodeRead(evs []evdev.InputEvent, read []time.Duration) []string {
	var d cardDecoder
	var ids []string
	for i, ev := range evs {
		if id, ok := d.feed(ev, read[i]); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

func same(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// The same card typed by readers made for a US, a German and a French
// keyboard gives the same id: the decoder reads key positions, and Shift
// (which a French reader holds for digits) does not change a digit.
func TestCardIDIndependentOfLayout(t *testing.T) {
	for _, lay := range []string{"us", "de", "fr"} {
		ty := newTypist().text(layout(lay), "0004921380").enter()
		if got := decodeAll(ty.evs); !same(got, []string{"0004921380"}) {
			t.Errorf("%s decimal: %v", lay, got)
		}
	}
	for _, lay := range []string{"us", "de"} {
		ty := newTypist().text(layout(lay), "04A1B2C3D4E5F6").enter()
		if got := decodeAll(ty.evs); !same(got, []string{"04A1B2C3D4E5F6"}) {
			t.Errorf("%s hex: %v", lay, got)
		}
	}
	// The two letters a German layout swaps come out as the US keyboard
	// names their keys: the same card is the same id on every reader of
	// one kind, which is what a mapping needs.
	us := decodeAll(newTypist().text(layout("us"), "Z1").enter().evs)
	de := decodeAll(newTypist().text(layout("de"), "Y1").enter().evs)
	if !same(us, de) || !same(us, []string{"Z1"}) {
		t.Errorf("Z on a US reader %v, Y on a German one %v", us, de)
	}
}

func TestKeypadDigits(t *testing.T) {
	ty := newTypist()
	for _, c := range []evdev.EvCode{evdev.KEY_KP1, evdev.KEY_KP0, evdev.KEY_KP9} {
		ty.tap(c, false)
	}
	ty.tap(evdev.KEY_KPENTER, false)
	if got := decodeAll(ty.evs); !same(got, []string{"109"}) {
		t.Errorf("keypad: %v", got)
	}
}

func TestDecoderDiscardsBrokenIDs(t *testing.T) {
	us := layout("us")
	cases := []struct {
		name string
		evs  func() []evdev.InputEvent
		want []string
	}{
		{"enter alone", func() []evdev.InputEvent { return newTypist().enter().evs }, nil},
		{"auto-repeat is not a key", func() []evdev.InputEvent {
			ty := newTypist()
			ty.key(evdev.KEY_1, 1)
			ty.key(evdev.KEY_1, 2)
			ty.key(evdev.KEY_1, 2)
			ty.key(evdev.KEY_1, 0)
			return ty.enter().evs
		}, []string{"1"}},
		{"lost events", func() []evdev.InputEvent {
			ty := newTypist().text(us, "12345")
			ty.ev(evdev.EV_SYN, evdev.SYN_DROPPED, 0)
			return ty.text(us, "678").enter().text(us, "0004921380").enter().evs
		}, []string{"0004921380"}},
		{"a pause starts a new id", func() []evdev.InputEvent {
			ty := newTypist().text(us, "12")
			ty.at = ty.at.Add(time.Minute)
			return ty.text(us, "0004921380").enter().evs
		}, []string{"0004921380"}},
		{"too long", func() []evdev.InputEvent {
			return newTypist().text(us, strings.Repeat("1", maxIDLen+1)).enter().text(us, "42").enter().evs
		}, []string{"42"}},
		{"longest", func() []evdev.InputEvent {
			return newTypist().text(us, strings.Repeat("7", maxIDLen)).enter().evs
		}, []string{strings.Repeat("7", maxIDLen)}},
	}
	for _, c := range cases {
		if got := decodeAll(c.evs()); !same(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The kernel stamps keys with the wall clock. Network time stepping it by
// an hour, forward or back, in the middle of an id does not cut the id in
// two, and a real pause still starts a new id; a reader's keys that
// playerd read late, all at once, are still one id.
func TestCardIDAcrossClockSteps(t *testing.T) {
	us := layout("us")
	type typed struct {
		evs  []evdev.InputEvent
		read []time.Duration
	}
	// typeWith types text, each key read as stamped; then the wall clock
	// steps by step and the reading pauses for pause.
	typeWith := func(tp *typed, ty *typist, text string, step, pause time.Duration) {
		n := len(ty.evs)
		ty.text(us, text)
		var up time.Duration
		if len(tp.read) > 0 {
			up = tp.read[len(tp.read)-1] + 4*time.Millisecond
		}
		for _, ev := range ty.evs[n:] {
			tp.evs = append(tp.evs, ev)
			tp.read = append(tp.read, up)
			up += time.Millisecond
		}
		ty.at = ty.at.Add(step + pause)
		if len(tp.read) > 0 {
			tp.read[len(tp.read)-1] += pause
		}
	}
	for _, c := range []struct {
		name        string
		step, pause time.Duration
		want        []string
	}{
		{"a step forward", time.Hour, 0, []string{"0004921380"}},
		{"a step back", -time.Hour, 0, []string{"0004921380"}},
		{"a step forward and a pause", time.Hour, time.Second, []string{"921380"}},
		{"a step back and a pause", -time.Hour, time.Second, []string{"921380"}},
	} {
		var tp typed
		ty := newTypist()
		typeWith(&tp, ty, "0004", c.step, c.pause)
		typeWith(&tp, ty, "921380", 0, 0)
		ty.evs = ty.evs[:0]
		ty.enter()
		for _, ev := range ty.evs {
			tp.evs = append(tp.evs, ev)
			tp.read = append(tp.read, tp.read[len(tp.read)-1]+time.Millisecond)
		}
		if got := decodeRead(tp.evs, tp.read); !same(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Keys typed a few milliseconds apart, read late and all at once.
	ty := newTypist().text(us, "0004921380").enter()
	late := make([]time.Duration, len(ty.evs))
	for i := range late {
		late[i] = time.Second
	}
	if got := decodeRead(ty.evs, late); !same(got, []string{"0004921380"}) {
		t.Errorf("read late at once: %v", got)
	}
}
