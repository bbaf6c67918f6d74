// Package message keeps the one message the box shows on its screen (POST
// /api/message, the home-automation API, the screen's own refusals). It is
// the message's owner: every change (shown, replaced, cleared, dismissed,
// expired) is handed to its notifier, and the screen, GET /api/events and
// the home-automation stream learn of it from the change feed.
package message

import (
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/storybox/storybox/services/internal/fault"
)

// Limits of POST /api/message, as the real box (MuPiBox-NG) enforces them.
const (
	MaxMessageChars  = 1000
	MaxTitleChars    = 120
	MaxMessageMS     = 30000
	DefaultMessageMS = 8000
)

// Request is the body of POST /api/message. Pointers tell a missing
// field from an empty one.
type Request struct {
	Message    *string `json:"message"`
	Title      *string `json:"title"`
	DurationMS *int64  `json:"duration_ms"`
}

// Message is the message on screen, as GET /api/message reports it so other
// clients can mirror the box.
type Message struct {
	ID         uint64    `json:"id"`
	Title      string    `json:"title"`
	Message    string    `json:"message"`
	DurationMS int       `json:"duration_ms"`
	ShownAt    time.Time `json:"shown_at"`
	ExpiresAt  time.Time `json:"expires_at"`
}

func invalid(format string, args ...any) error {
	return fault.New(fault.Invalid, format, args...)
}

// Check applies the message rules without showing anything, so the API can
// refuse a bad body even when no display is running.
func (r Request) Check() error {
	_, _, _, err := r.validate()
	return err
}

// validate checks a request and returns the cleaned title, text and duration.
// The error text is what the client reads, so it names the field.
func (r Request) validate() (title, msg string, dur time.Duration, err error) {
	if r.Message == nil {
		return "", "", 0, invalid("message is required")
	}
	msg = clean(*r.Message, true)
	if strings.TrimSpace(msg) == "" {
		return "", "", 0, invalid("message is required")
	}
	if n := utf8.RuneCountInString(*r.Message); n > MaxMessageChars {
		return "", "", 0, invalid("message is too long (%d characters, at most %d)", n, MaxMessageChars)
	}
	if r.Title != nil {
		if n := utf8.RuneCountInString(*r.Title); n > MaxTitleChars {
			return "", "", 0, invalid("title is too long (%d characters, at most %d)", n, MaxTitleChars)
		}
		title = strings.TrimSpace(clean(*r.Title, false))
	}
	ms := int64(DefaultMessageMS)
	if r.DurationMS != nil {
		ms = *r.DurationMS
		if ms < 0 || ms > MaxMessageMS {
			return "", "", 0, invalid("duration_ms must be between 0 and %d", MaxMessageMS)
		}
	}
	return title, strings.TrimSpace(msg), time.Duration(ms) * time.Millisecond, nil
}

// clean drops control characters the font cannot draw; newlines survive in
// the body because they are the sender's line breaks.
func clean(s string, keepNewlines bool) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' && keepNewlines:
			return r
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
}

// Event is the payload of events.KindMessage: the message now on screen,
// or null once it was cleared (expired, dismissed with a tap, or cleared
// with duration_ms 0).
type Event struct {
	Message *Message `json:"message"`
}

// Board holds the message on screen. Its methods are safe for concurrent
// use.
type Board struct {
	now    func() time.Time
	notify func(Event)

	mu  sync.Mutex
	seq uint64
	cur *Message
}

// NewBoard returns an empty board. notify hears every change, after it took
// effect and without locks held; now stamps and expires messages (nil: the
// machine's clock).
func NewBoard(now func() time.Time, notify func(Event)) *Board {
	if now == nil {
		now = time.Now
	}
	if notify == nil {
		notify = func(Event) {}
	}
	return &Board{now: now, notify: notify}
}

// Show validates r and shows it at once, replacing any message; a duration
// of 0 clears the message instead.
func (b *Board) Show(r Request) (Message, error) {
	title, text, dur, err := r.validate()
	if err != nil {
		return Message{}, err
	}
	now := b.now()
	b.mu.Lock()
	b.seq++
	m := Message{ID: b.seq, Title: title, Message: text, DurationMS: int(dur / time.Millisecond),
		ShownAt: now, ExpiresAt: now.Add(dur)}
	had := b.cur != nil
	b.cur = nil
	if dur > 0 {
		b.cur = &m
	}
	b.mu.Unlock()
	if dur > 0 {
		shown := m
		b.notify(Event{&shown})
	} else if had {
		b.notify(Event{})
	}
	return m, nil
}

// Active returns the message on screen, or nil. A message found expired is
// cleared here, and that is a change like any other: the screen wakes at
// the expiry and asks, so clients hear of it then.
func (b *Board) Active() *Message {
	now := b.now()
	b.mu.Lock()
	expired := b.cur != nil && !now.Before(b.cur.ExpiresAt)
	if expired {
		b.cur = nil
	}
	var out *Message
	if b.cur != nil {
		m := *b.cur
		out = &m
	}
	b.mu.Unlock()
	if expired {
		b.notify(Event{})
	}
	return out
}

// Dismiss clears the message (a tap on it).
func (b *Board) Dismiss() {
	b.mu.Lock()
	had := b.cur != nil
	b.cur = nil
	b.mu.Unlock()
	if had {
		b.notify(Event{})
	}
}
