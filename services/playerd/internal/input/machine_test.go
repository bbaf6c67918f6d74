package input

import (
	"github.com/storybox/storybox/services/playerd/internal/wiring"
	"strings"
	"testing"
	"time"
)

// The button machine with explicit times: debounce, short and long presses.
func TestMachine(t *testing.T) {
	w := wiring.Default()
	w.GPIO.DebounceMS = 20
	w.LongPressMS = 3000
	w.GPIO.Buttons = []Button{{Line: 17, Action: BtnNext}, {Line: 27, Action: BtnToggle, LongAction: BtnPowerOff},
		{Line: 5, LongAction: BtnPowerOff}}
	var fired []string
	m := newMachine(w, func(a string) { fired = append(fired, a) })
	t0 := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	line := func(n int) source { return source{gpio: true, code: n} }
	step := func(ms int, src source, down bool) {
		m.edge(edge{src: src, down: down, at: at(ms)})
		m.tick(at(ms))
	}
	expect := func(what string, want ...string) {
		t.Helper()
		if strings.Join(fired, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: fired %v, want %v", what, fired, want)
		}
		fired = nil
	}

	// A contact that bounces for 3 ms: one press, 20 ms after the last bounce.
	step(0, line(17), true)
	step(1, line(17), false)
	step(2, line(17), true)
	step(3, line(17), false)
	step(3, line(17), true)
	if next, ok := m.next(); !ok || !next.Equal(at(23)) {
		t.Fatalf("next = %v, %v; want +23 ms", next, ok)
	}
	m.tick(at(22))
	expect("before the contact settled")
	m.tick(at(23))
	expect("settled", BtnNext)
	// The release bounces too; nothing fires on release.
	step(100, line(17), false)
	step(101, line(17), true)
	step(102, line(17), false)
	m.tick(at(200))
	expect("release")
	// A blip shorter than the debounce time is no press.
	step(300, line(17), true)
	step(310, line(17), false)
	m.tick(at(400))
	expect("blip")

	// A button with a long action: a short press acts on release, ...
	step(1000, line(27), true)
	m.tick(at(1020))
	expect("held briefly")
	step(1200, line(27), false)
	m.tick(at(1220))
	expect("short press", BtnToggle)
	// ... a long one at the long-press time, counted from the press, and
	// not again on release.
	step(2000, line(27), true)
	if next, _ := m.next(); !next.Equal(at(2020)) {
		t.Fatalf("next = %v", next)
	}
	m.tick(at(2020))
	if next, _ := m.next(); !next.Equal(at(5000)) {
		t.Fatalf("long-press deadline %v", next)
	}
	m.tick(at(4999))
	expect("not yet long")
	m.tick(at(5000))
	expect("long press", BtnPowerOff)
	m.tick(at(9000))
	step(9000, line(27), false)
	m.tick(at(9100))
	expect("release after the long press")
	if _, ok := m.next(); ok {
		t.Error("something pending with every button up")
	}

	// A button with only a long action: a tap does nothing.
	step(10000, line(5), true)
	step(10100, line(5), false)
	m.tick(at(10200))
	expect("tap on a power button")

	// Held when first seen: nothing until released and pressed again.
	m.edge(edge{src: line(17), down: true, at: at(11000), init: true})
	m.tick(at(12000))
	expect("held at start")

	// Lines and keys nobody wired are ignored.
	step(13000, line(99), true)
	m.tick(at(14000))
	expect("unwired line")
}

// Media keys have no debounce: they act on the key event.
func TestMachineMediaKeys(t *testing.T) {
	var fired []string
	m := newMachine(wiring.Default(), func(a string) { fired = append(fired, a) })
	t0 := time.Now()
	m.edge(edge{src: source{code: 164}, down: true, at: t0}) // KEY_PLAYPAUSE
	m.edge(edge{src: source{code: 164}, down: false, at: t0})
	if strings.Join(fired, ",") != BtnToggle {
		t.Errorf("fired %v", fired)
	}
	w := wiring.Default()
	w.MediaKeys = false
	fired = nil
	m = newMachine(w, func(a string) { fired = append(fired, a) })
	m.edge(edge{src: source{code: 164}, down: true, at: t0})
	if len(fired) != 0 {
		t.Errorf("media keys off, fired %v", fired)
	}
}
