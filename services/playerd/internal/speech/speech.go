// Package speech reads announcements aloud: POST /api/speak. A Voice renders
// text to WAV (offline through the static storybox-speak program, optionally
// through a speech server on the LAN), a Cache keeps rendered phrases on disk,
// and a Service queues announcements and hands them, one at a time and in
// order, to the player engine, which pauses the music, plays the clip and
// resumes the music where it was.
package speech

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/storybox/storybox/services/internal/fault"
)

// MaxTextRunes is the longest announcement accepted, in characters after
// normalisation: about half a minute of speech. Longer texts are refused with
// 400 rather than cut, so nothing is read aloud half.
const MaxTextRunes = 500

// DefaultLanguage is spoken when neither the request nor the settings name one.
const DefaultLanguage = "de-DE"

// Errors of Speak, each of a fault kind the API maps to a status.
var (
	// ErrEmpty: the text is missing or only whitespace.
	ErrEmpty = fault.New(fault.Invalid, "text is empty").Coded("speech_empty")
	// ErrTooLong: the text is longer than MaxTextRunes.
	ErrTooLong = fault.New(fault.Invalid, "text is longer than %d characters", MaxTextRunes).Coded("speech_too_long")
	// ErrLanguage: the language tag is malformed or no voice speaks it.
	ErrLanguage = fault.New(fault.Invalid, "language not available").Coded("speech_language")
	// ErrUnavailable: no voice can render speech at all.
	ErrUnavailable = fault.New(fault.Unavailable, "no voice available").Coded("speech_unavailable")
	// ErrBusy: the announcement queue is full; it drains within seconds.
	ErrBusy = fault.Retry(fault.Busy, 5*time.Second, "too many announcements waiting").Coded("speech_busy")
	// ErrClosed: the service has shut down.
	ErrClosed = fault.New(fault.Unavailable, "speech service is shut down")
)

// Settings are the voice settings of the box (its settings page).
type Settings struct {
	// Language is a tag such as "de-DE", "en-GB" or "fr".
	Language string
	// Engine picks the local engine: "" or "auto" (Pico where it has the
	// language, espeak-ng otherwise), "pico" or "espeak".
	Engine string
	// Rate and Pitch are percentages of normal, 50..200; 0 means 100.
	Rate, Pitch int
}

// The limits of Settings, which the settings document checks too.
const (
	// MinPercent and MaxPercent bound Rate and Pitch.
	MinPercent, MaxPercent = 50, 200
)

// Engines are the values Settings.Engine takes ("" means auto).
var Engines = []string{"auto", "pico", "espeak"}

// ValidLanguage reports whether tag is a well-formed language tag such as
// "de", "en-GB" or "pt_BR".
func ValidLanguage(tag string) bool { return languageTag.MatchString(tag) }

// Normalized fills in defaults and checks ranges; errors wrap ErrLanguage.
func (s Settings) Normalized() (Settings, error) {
	if s.Language == "" {
		s.Language = DefaultLanguage
	}
	if !ValidLanguage(s.Language) {
		return s, fmt.Errorf("%w: malformed tag %q", ErrLanguage, s.Language)
	}
	if s.Engine == "" {
		s.Engine = "auto"
	}
	if !slices.Contains(Engines, s.Engine) {
		return s, fmt.Errorf("unknown speech engine %q (want auto, pico or espeak)", s.Engine)
	}
	for _, p := range []*int{&s.Rate, &s.Pitch} {
		if *p == 0 {
			*p = 100
		}
		if *p < MinPercent || *p > MaxPercent {
			return s, fmt.Errorf("speech rate and pitch must be %d..%d percent, got %d", MinPercent, MaxPercent, *p)
		}
	}
	return s, nil
}

var languageTag = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,2}$`)

// Request is one text to render.
type Request struct {
	Text     string // normalised (see NormalizeText)
	Settings Settings
}

// Voice renders text to a WAV file (16-bit PCM, any rate, mono or stereo).
type Voice interface {
	// ID names the voice and its version; it is part of the cache key, so
	// a new voice build never serves audio rendered by the old one.
	ID() string
	// Available reports why the voice cannot render, or nil.
	Available() error
	Render(ctx context.Context, r Request) ([]byte, error)
}

// NormalizeText makes the text safe and canonical: invalid UTF-8 and control
// characters become spaces, runs of whitespace collapse to one space. Texts
// that differ only in spacing therefore share a cache entry.
func NormalizeText(text string) (string, error) {
	text = strings.ToValidUTF8(text, " ")
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, text)
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return "", ErrEmpty
	}
	if utf8.RuneCountInString(text) > MaxTextRunes {
		return "", ErrTooLong
	}
	return text, nil
}

// Key is the cache key of a rendering: SHA-256 over the voice, the settings
// and the text, each length-prefixed so no two inputs share an encoding.
func Key(voiceID string, r Request) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(voiceID)
	field(strings.ToLower(strings.ReplaceAll(r.Settings.Language, "_", "-")))
	field(r.Settings.Engine)
	field(fmt.Sprint(r.Settings.Rate, r.Settings.Pitch))
	field(r.Text)
	return hex.EncodeToString(h.Sum(nil))
}
