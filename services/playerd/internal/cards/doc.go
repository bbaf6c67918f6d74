// Package cards turns card reads into player commands: the parent's
// mappings from card ids to actions (cards.json, or one file per card in
// the household's shared folder once shared; part of the backup), the
// rules for a card that is already playing and for a card read twice,
// teach mode ("learn the next card"), the cards nobody has assigned yet,
// and the short sounds that tell a child what happened.
package cards

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/household"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// FileName is the mappings' file in the data directory.
const FileName = "cards.json"

// Version is the layout of cards.json this box writes and reads.
const Version = 1

// Actions a card can have. Folder, resume and radio name a folder of the
// library; the rest are player commands.
const (
	ActFolder = "folder" // play the folder from its start
	ActResume = "resume" // continue the folder where listening stopped
	// ActRadio plays a station. Stations are folders of kind radio in
	// /api/library (issue 16) and play with the folder command like any
	// folder; checkFolder is where the kind is checked once they exist.
	ActRadio       = "radio"
	ActStop        = "stop"
	ActPause       = "pause"
	ActToggle      = "toggle"
	ActNext        = "next"
	ActPrevious    = "previous"
	ActSleepTimer  = "sleep_timer"  // value: minutes, default 15
	ActVolumeDelta = "volume_delta" // value: signed step
	ActShuffle     = "shuffle"      // value: true or false
	ActRepeat      = "repeat"       // value: "off", "folder" or "track"
	ActSeekDelta   = "seek_delta"   // value: signed seconds
	// ActCalm switches calm mode (the settings' calm), value true or
	// false: a parent's card for the kindergarten morning.
	ActCalm = "calm"
)

var actions = []string{ActFolder, ActResume, ActRadio, ActStop, ActPause, ActToggle, ActNext, ActPrevious,
	ActSleepTimer, ActVolumeDelta, ActShuffle, ActRepeat, ActSeekDelta, ActCalm}

// What placing the card whose folder plays already does (the second tap).
// A paused folder's card always continues it, whatever the choice.
const (
	SameCardContinue    = "continue"     // nothing: it plays on
	SameCardTogglePause = "toggle_pause" // pause it
	SameCardRestart     = "restart"      // the folder again from its first track
	SameCardNext        = "next"         // the next track (in single mode: the next story)
)

var sameCards = []string{SameCardContinue, SameCardTogglePause, SameCardRestart, SameCardNext}

// Limits of the document.
const (
	MaxCards        = 1000
	MaxIDLen        = 32
	maxNameLen      = 80
	DefaultSleepMin = 15
	maxVolumeStep   = 50
	maxSeekStep     = 600 // seconds: ten minutes of an audiobook
)

// Mapping is what one card does.
type Mapping struct {
	Action   string   `json:"action"`
	FolderID string   `json:"folder_id,omitempty"`
	Value    *float64 `json:"value,omitempty"`
	// On and Word are "value" as a boolean (shuffle, calm) and as a word
	// (repeat); on the wire all three are "value" (mapping_json.go).
	On   *bool  `json:"-"`
	Word string `json:"-"`
	// Name is the parent's label for the card ("Bobo, blue figure").
	Name string `json:"name,omitempty"`
	// Mode is a folder card's play mode (player.Modes), passed on the
	// folder command; "": the folder's own.
	Mode string `json:"mode,omitempty"`
	// SameCard overrides the document's second tap for this card's
	// folder; "": the document's.
	SameCard string `json:"same_card,omitempty"`
}

// Doc is cards.json.
type Doc struct {
	Version  int    `json:"version"`
	SameCard string `json:"same_card"`
	// Sounds: the short signals for a read, an unknown and a refused card.
	Sounds bool               `json:"sounds"`
	Cards  map[string]Mapping `json:"cards"`
}

// Defaults are the document before a parent saved one.
func Defaults() Doc {
	return Doc{Version: Version, SameCard: SameCardContinue, Sounds: true, Cards: map[string]Mapping{}}
}

func (d Doc) clone() Doc {
	c := d
	c.Cards = make(map[string]Mapping, len(d.Cards))
	for id, m := range d.Cards {
		if m.Value != nil {
			v := *m.Value
			m.Value = &v
		}
		if m.On != nil {
			on := *m.On
			m.On = &on
		}
		c.Cards[id] = m
	}
	return c
}

// CheckID accepts what a reader types: digits and capital letters (the
// decoder turns letters into capitals), 1..32 of them.
func CheckID(id string) error {
	if id == "" || len(id) > MaxIDLen {
		return fault.New(fault.Invalid, "card id must be 1..%d characters", MaxIDLen)
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return fault.New(fault.Invalid, "card id %q: only digits and capital letters", id)
		}
	}
	return nil
}

// Normalized fills in the defaults a mapping may leave out: a sleep timer
// without minutes is the 15-minute one.
func (m Mapping) Normalized() Mapping {
	if m.Action == ActSleepTimer && m.Value == nil {
		v := float64(DefaultSleepMin)
		m.Value = &v
	}
	return m
}

// Validate checks one mapping without the library: fields fit the action.
func (m Mapping) Validate() error {
	needFolder, needValue, needOn := false, false, false
	switch m.Action {
	case ActFolder, ActResume, ActRadio:
		needFolder = true
	case ActSleepTimer, ActVolumeDelta, ActSeekDelta:
		needValue = true
	case ActShuffle, ActCalm:
		needOn = true
	case ActRepeat:
		if !player.ValidRepeat(m.Word) || m.Value != nil || m.On != nil {
			return fault.New(fault.Invalid, "repeat needs value \"off\", \"folder\" or \"track\"")
		}
	case ActStop, ActPause, ActToggle, ActNext, ActPrevious:
	case "":
		return fault.New(fault.Invalid, "action is required")
	default:
		return fault.New(fault.Invalid, "unknown action %q (want one of %s)", m.Action, strings.Join(actions, ", "))
	}
	switch {
	case m.Word != "" && m.Action != ActRepeat:
		return fault.New(fault.Invalid, "%s takes no word as value", m.Action)
	case needOn && (m.On == nil || m.Value != nil):
		return fault.New(fault.Invalid, "%s needs value true or false", m.Action)
	case !needOn && m.On != nil:
		return fault.New(fault.Invalid, "%s takes no true or false", m.Action)
	case m.Mode != "" && m.Action != ActFolder:
		return fault.New(fault.Invalid, "%s takes no mode (only a folder card has one)", m.Action)
	case m.Mode != "" && !player.Mode(m.Mode).Valid():
		return fault.New(fault.Invalid, "unknown mode %q (one of %v)", m.Mode, player.Modes)
	}
	switch {
	case needFolder && m.FolderID == "":
		return fault.New(fault.Invalid, "%s needs folder_id", m.Action)
	case !needFolder && m.FolderID != "":
		return fault.New(fault.Invalid, "%s takes no folder_id", m.Action)
	case needValue && m.Value == nil:
		return fault.New(fault.Invalid, "%s needs value", m.Action)
	case !needValue && m.Value != nil:
		return fault.New(fault.Invalid, "%s takes no value", m.Action)
	}
	if m.Value != nil {
		v := *m.Value
		if v != math.Trunc(v) || math.IsInf(v, 0) {
			return fault.New(fault.Invalid, "value must be a whole number")
		}
		switch m.Action {
		case ActSleepTimer:
			// The rules' range: a card the gate would refuse is refused
			// when it is mapped, not when a child holds it up.
			if v < rules.SleepMin || v > rules.SleepMax {
				return fault.New(fault.Invalid, "sleep_timer value is minutes, %d..%d", rules.SleepMin, rules.SleepMax)
			}
		case ActVolumeDelta:
			if v == 0 || math.Abs(v) > maxVolumeStep {
				return fault.New(fault.Invalid, "volume_delta value is a step of -%d..%d, not 0", maxVolumeStep, maxVolumeStep)
			}
		case ActSeekDelta:
			if v == 0 || math.Abs(v) > maxSeekStep {
				return fault.New(fault.Invalid, "seek_delta value is seconds, -%d..%d, not 0", maxSeekStep, maxSeekStep)
			}
		}
	}
	if m.SameCard != "" && !needFolder {
		return fault.New(fault.Invalid, "%s takes no same_card", m.Action)
	}
	if m.SameCard != "" && !slices.Contains(sameCards, m.SameCard) {
		return fault.New(fault.Invalid, "same_card must be one of %s, not %q", strings.Join(sameCards, ", "), m.SameCard)
	}
	if len(m.FolderID) > 256 {
		return fault.New(fault.Invalid, "folder_id is too long")
	}
	if !utf8.ValidString(m.Name) || utf8.RuneCountInString(m.Name) > maxNameLen {
		return fault.New(fault.Invalid, "name must be text of at most %d characters", maxNameLen)
	}
	for _, r := range m.Name {
		if unicode.IsControl(r) {
			return fault.New(fault.Invalid, "name must not contain control characters")
		}
	}
	return nil
}

// Validate checks the document without the library.
func (d Doc) Validate() error {
	if d.Version != Version {
		return fault.New(fault.Invalid, "version must be %d, not %d", Version, d.Version)
	}
	if !slices.Contains(sameCards, d.SameCard) {
		return fault.New(fault.Invalid, "same_card must be one of %s, not %q", strings.Join(sameCards, ", "), d.SameCard)
	}
	if len(d.Cards) > MaxCards {
		return fault.New(fault.Invalid, "at most %d cards", MaxCards)
	}
	for _, id := range sortedIDs(d.Cards) {
		if err := CheckID(id); err != nil {
			return err
		}
		m := d.Cards[id]
		if err := m.Validate(); err != nil {
			return fault.New(fault.Invalid, "card %s: %s", id, fault.Message(err))
		}
	}
	return nil
}

func sortedIDs(cards map[string]Mapping) []string {
	ids := make([]string, 0, len(cards))
	for id := range cards {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Parse decodes and validates cards.json: unknown fields, trailing data and
// missing fields are refused, so a file from a newer or broken writer is
// never half understood.
func Parse(data []byte) (Doc, error) {
	var raw struct {
		Version  *int                `json:"version"`
		SameCard *string             `json:"same_card"`
		Sounds   *bool               `json:"sounds"`
		Cards    *map[string]Mapping `json:"cards"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Doc{}, fault.New(fault.Invalid, "cards: %v", err)
	}
	if dec.More() {
		return Doc{}, fault.New(fault.Invalid, "cards: trailing data")
	}
	if raw.Version == nil || raw.SameCard == nil || raw.Sounds == nil || raw.Cards == nil || *raw.Cards == nil {
		return Doc{}, fault.New(fault.Invalid, "cards: version, same_card, sounds and cards are required")
	}
	d := Doc{Version: *raw.Version, SameCard: *raw.SameCard, Sounds: *raw.Sounds, Cards: *raw.Cards}
	if err := d.Validate(); err != nil {
		return Doc{}, err
	}
	return d, nil
}

// Check validates a copy of cards.json, for a restore.
func Check(data []byte) error {
	_, err := Parse(data)
	return err
}

// Encode is cards.json as the box writes it.
func Encode(d Doc) ([]byte, error) {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("cards: %w", err)
	}
	return append(data, '\n'), nil
}

// Store keeps cards.json: in memory for reading, on disk through
// state.WriteFile. A change is written first and takes effect only once it
// is on disk, so a failed write changes nothing.
type Store struct {
	path    string
	changed func() // told of every change, once it took effect

	mu    sync.Mutex
	doc   Doc
	saved bool // the file exists: a parent saved something
	// shared holds the mappings once Share was called; cards.json then
	// holds only same_card and sounds.
	shared *household.Store
}

// Load reads cards.json from dir. A missing file gives the defaults; a
// corrupt or invalid one gives the defaults and an error to log, and stays
// on disk for the parent until the next save replaces it. changed (nil:
// nobody) hears of every change the store makes from now on: Update and
// Reload.
func Load(dir string, changed func()) (*Store, error) {
	if changed == nil {
		changed = func() {}
	}
	s := &Store{path: filepath.Join(dir, FileName), doc: Defaults(), changed: changed}
	return s, s.load()
}

func (s *Store) load() error {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.mu.Lock()
		s.doc, s.saved = Defaults(), false
		s.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("cards: %w", err)
	}
	d, err := Parse(data)
	if err != nil {
		return fmt.Errorf("cards: %s unusable, using no mappings: %w", FileName, err)
	}
	s.mu.Lock()
	s.doc, s.saved = d, true
	s.mu.Unlock()
	return nil
}

// Reload reads the file again, after a restore replaced (or removed) it.
// Shared, the mappings of the restored file replace the household's.
func (s *Store) Reload() error {
	defer s.changed()
	if err := s.load(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shared == nil {
		return nil
	}
	return s.replaceShared()
}

// replaceShared makes the document read from cards.json, a restored one,
// the household's mappings. s.mu is held.
func (s *Store) replaceShared() error {
	restored := s.doc.clone()
	// A mapping this box cannot use stays as it is (reported).
	cards, readErr := s.readShared()
	s.doc.Cards = cards
	s.saved = false // cards.json is written anew, without the mappings
	return errors.Join(readErr, s.updateShared(func(d *Doc) error { *d = restored; return nil }))
}

// Get returns a copy of the document.
func (s *Store) Get() Doc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doc.clone()
}

// Read is the document as a backup holds it, the shared mappings included;
// nil while the defaults are in use.
func (s *Store) Read() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.saved && len(s.doc.Cards) == 0 {
		return nil, nil
	}
	return Encode(s.doc)
}

// Update applies f to a copy of the document, validates the result, writes
// it and only then makes it current. f's error is returned as it is.
func (s *Store) Update(f func(*Doc) error) error {
	s.mu.Lock()
	err := s.update(f)
	s.mu.Unlock()
	if err == nil {
		s.changed()
	}
	return err
}

func (s *Store) update(f func(*Doc) error) error {
	if s.shared != nil {
		return s.updateShared(f)
	}
	d := s.doc.clone()
	if err := f(&d); err != nil {
		return err
	}
	if err := d.Validate(); err != nil {
		return err
	}
	data, err := Encode(d)
	if err != nil {
		return err
	}
	if err := state.WriteFile(s.path, data); err != nil {
		return fault.Wrap(fault.Internal, err, "card mappings could not be saved")
	}
	s.doc, s.saved = d, true
	return nil
}
