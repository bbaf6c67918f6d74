// Package input reads the box's physical inputs: USB card readers and media
// keys through evdev, and buttons on GPIO lines through the GPIO character
// device. Card ids go to a CardSink; buttons and keys become player
// commands on the one command path.
package input

import (
	"time"

	evdev "github.com/holoplot/go-evdev"
)

// Card readers are USB keyboards that type a card's id and Enter. The
// decoder reads key codes, which name key positions, never characters: the
// id is the same whatever keyboard layout the reader was made for or the
// box would use. Digits come from the number row (with or without Shift:
// readers made for AZERTY layouts hold Shift for them) or the keypad;
// letters (hex ids) by their position on a US keyboard, in capitals.

// maxIDLen is the longest id kept; a longer run of keys is no card.
const maxIDLen = 32

// keyGap is the longest pause between two keys of one id. Readers type a
// whole id within tens of milliseconds; keys further apart are a person at
// a keyboard, or the rest of an id whose start was lost.
const keyGap = 500 * time.Millisecond

var keyChars = func() map[evdev.EvCode]byte {
	m := map[evdev.EvCode]byte{
		evdev.KEY_1: '1', evdev.KEY_2: '2', evdev.KEY_3: '3', evdev.KEY_4: '4', evdev.KEY_5: '5',
		evdev.KEY_6: '6', evdev.KEY_7: '7', evdev.KEY_8: '8', evdev.KEY_9: '9', evdev.KEY_0: '0',
		evdev.KEY_KP1: '1', evdev.KEY_KP2: '2', evdev.KEY_KP3: '3', evdev.KEY_KP4: '4', evdev.KEY_KP5: '5',
		evdev.KEY_KP6: '6', evdev.KEY_KP7: '7', evdev.KEY_KP8: '8', evdev.KEY_KP9: '9', evdev.KEY_KP0: '0',
	}
	rows := []struct {
		first evdev.EvCode
		chars string
	}{{evdev.KEY_Q, "QWERTYUIOP"}, {evdev.KEY_A, "ASDFGHJKL"}, {evdev.KEY_Z, "ZXCVBNM"}}
	for _, r := range rows {
		for i := range len(r.chars) {
			m[r.first+evdev.EvCode(i)] = r.chars[i]
		}
	}
	return m
}()

// cardDecoder assembles ids from one reader's key events.
type cardDecoder struct {
	buf      []byte
	last     time.Time     // the kernel's stamp of the last key: wall-clock time
	lastRead time.Duration // when it was read, on the monotonic clock
	// broken: keys of this id were lost or too many; it ends unread at
	// the next Enter (or pause).
	broken bool
}

// feed takes one event, read at read on a monotonic clock, and returns an
// id when Enter completes one.
func (d *cardDecoder) feed(ev evdev.InputEvent, read time.Duration) (string, bool) {
	switch ev.Type {
	case evdev.EV_SYN:
		if ev.Code == evdev.SYN_DROPPED {
			d.buf, d.broken = d.buf[:0], true // keys were lost: the id would be wrong
		}
		return "", false
	case evdev.EV_KEY:
	default:
		return "", false
	}
	if ev.Value != 1 { // releases and auto-repeat
		return "", false
	}
	at := time.Unix(ev.Time.Sec, ev.Time.Usec*1000)
	if (len(d.buf) > 0 || d.broken) && d.pause(at, read) > keyGap {
		d.reset()
	}
	d.last, d.lastRead = at, read
	switch ev.Code {
	case evdev.KEY_ENTER, evdev.KEY_KPENTER:
		id, ok := string(d.buf), len(d.buf) > 0 && !d.broken
		d.reset()
		return id, ok
	}
	c, ok := keyChars[ev.Code]
	if !ok {
		return "", false // Shift and friends
	}
	if d.broken || len(d.buf) == maxIDLen {
		d.buf, d.broken = d.buf[:0], true
		return "", false
	}
	d.buf = append(d.buf, c)
	return "", false
}

// pause is the time between the last key and one stamped at and read at
// read. The kernel stamps keys with the wall clock, which keeps a reader's
// rhythm even when playerd read the keys late, but which network time
// steps: a step forward in the middle of an id would cut it in two. So a
// pause is only as long as the reading saw it too, and when the stamps go
// back (a step back) the reading alone tells.
func (d *cardDecoder) pause(at time.Time, read time.Duration) time.Duration {
	stamped, seen := at.Sub(d.last), read-d.lastRead
	if stamped < 0 {
		return seen
	}
	return min(stamped, seen)
}

func (d *cardDecoder) reset() {
	d.buf, d.broken = d.buf[:0], false
}
