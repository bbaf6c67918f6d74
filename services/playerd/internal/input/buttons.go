package input

import (
	"time"

	evdev "github.com/holoplot/go-evdev"
)

// source names one button: a GPIO line or a key code of a media-key device.
type source struct {
	gpio bool
	code int // line offset or key code
}

// edge is a button going down or up.
type edge struct {
	src  source
	down bool
	at   time.Time
	// init sets the level without acting on it: a button already held
	// when its line is first read.
	init bool
}

// binding is what a button does.
type binding struct {
	action   string // on a press; on release instead when long is set
	long     string // when held for the long-press time
	debounce time.Duration
}

// mediaKeys are the keys of remotes, keyboards and headsets (and of the
// kernel's gpio-keys, whose device-tree overlay names a key code) that act
// on the player. Power needs a long press, as a GPIO power button does.
var mediaKeys = map[evdev.EvCode]binding{
	evdev.KEY_PLAYPAUSE: {action: BtnToggle},
	evdev.KEY_PLAY:      {action: BtnPlay},
	evdev.KEY_PLAYCD:    {action: BtnPlay},
	evdev.KEY_PAUSECD:   {action: BtnPause},
	evdev.KEY_STOPCD:    {action: BtnStop},
	// Held, next and previous are the audiobook skip; a short press
	// then acts on release.
	evdev.KEY_NEXTSONG:     {action: BtnNext, long: BtnSeekForward},
	evdev.KEY_PREVIOUSSONG: {action: BtnPrevious, long: BtnSeekBack},
	evdev.KEY_REWIND:       {action: BtnSeekBack},
	evdev.KEY_FASTFORWARD:  {action: BtnSeekForward},
	evdev.KEY_VOLUMEUP:     {action: BtnVolumeUp},
	evdev.KEY_VOLUMEDOWN:   {action: BtnVolumeDown},
	evdev.KEY_POWER:        {long: BtnPowerOff},
}

// buttonState is one button's debounced level and press.
type buttonState struct {
	stable, raw bool // pressed, as accepted and as last seen
	rawAt       time.Time
	pressedAt   time.Time
	longDone    bool
}

// machine turns edges into actions: a level counts once it has held for
// the debounce time, a press acts at once unless the button also has a
// long action (then a release before the long-press time does the short
// one). It is owned by one goroutine; time comes from the edges and from
// tick, so tests drive it without a clock.
type machine struct {
	long   time.Duration
	bind   map[source]binding
	states map[source]*buttonState
	fire   func(action string)
}

func newMachine(w Wiring, fire func(string)) *machine {
	m := &machine{long: time.Duration(w.LongPressMS) * time.Millisecond, bind: map[source]binding{},
		states: map[source]*buttonState{}, fire: fire}
	if w.MediaKeys {
		for code, b := range mediaKeys {
			m.bind[source{code: int(code)}] = b
		}
	}
	deb := time.Duration(w.GPIO.DebounceMS) * time.Millisecond
	for _, b := range w.GPIO.Buttons {
		m.bind[source{gpio: true, code: b.Line}] = binding{action: b.Action, long: b.LongAction, debounce: deb}
	}
	return m
}

func (m *machine) edge(e edge) {
	b, ok := m.bind[e.src]
	if !ok {
		return
	}
	st := m.states[e.src]
	if st == nil {
		st = &buttonState{}
		m.states[e.src] = st
	}
	if e.init {
		*st = buttonState{stable: e.down, raw: e.down, rawAt: e.at, pressedAt: e.at, longDone: e.down}
		return
	}
	if e.down == st.raw && e.down == st.stable {
		return // a repeated level (a lost edge in between): nothing new
	}
	st.raw, st.rawAt = e.down, e.at
	if b.debounce == 0 {
		m.settle(st, b)
	}
}

// tick acts on what has become due by now.
func (m *machine) tick(now time.Time) {
	for src, st := range m.states {
		b := m.bind[src]
		if st.raw != st.stable && now.Sub(st.rawAt) >= b.debounce {
			m.settle(st, b)
		}
		if st.stable && b.long != "" && !st.longDone && now.Sub(st.pressedAt) >= m.long {
			st.longDone = true
			m.fire(b.long)
		}
	}
}

func (m *machine) settle(st *buttonState, b binding) {
	if st.raw == st.stable {
		return
	}
	st.stable = st.raw
	if st.stable {
		st.pressedAt, st.longDone = st.rawAt, false
		if b.long == "" && b.action != "" {
			m.fire(b.action)
		}
		return
	}
	if b.long != "" && !st.longDone && b.action != "" {
		m.fire(b.action)
	}
}

// next is when tick has something to do, if ever.
func (m *machine) next() (time.Time, bool) {
	var t time.Time
	found := false
	consider := func(c time.Time) {
		if !found || c.Before(t) {
			t, found = c, true
		}
	}
	for src, st := range m.states {
		b := m.bind[src]
		if st.raw != st.stable {
			consider(st.rawAt.Add(b.debounce))
		}
		if st.stable && b.long != "" && !st.longDone {
			consider(st.pressedAt.Add(m.long))
		}
	}
	return t, found
}

func msDuration(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
