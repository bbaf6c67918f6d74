// Package onscreen is what the touch screen shows, as the rest of the box
// sees it: a message posted for it (its rules and what is shown) and the
// state clients mirror. The screen (package display) shows them; the APIs
// ask the core's screen facet (box.Screen), never the screen itself.
package onscreen

import (
	"strings"
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

// MessageRequest is the body of POST /api/message. Pointers tell a missing
// field from an empty one.
type MessageRequest struct {
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
func (r MessageRequest) Check() error {
	_, _, _, err := r.Clean()
	return err
}

// Clean checks a request and returns the cleaned title, text and duration.
// The error text is what the client reads, so it names the field.
func (r MessageRequest) Clean() (title, msg string, dur time.Duration, err error) {
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

// UIState is what the screen shows, for clients that mirror the box
// (GET /api/ui-state).
type UIState struct {
	Screen     string   `json:"screen"` // "home" or "playing"
	Message    *Message `json:"message"`
	BatteryLow bool     `json:"battery_low"`
}
