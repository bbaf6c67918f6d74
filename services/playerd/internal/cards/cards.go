package cards

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/chime"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Repeat is how long a card read again counts as the same placement: a
// child wiggling a figure, or a reader that types the id again while the
// card lies on it. The window slides with every read of the id.
const Repeat = 2 * time.Second

// actionTimeout bounds a card's sound and command: the player answers
// within a period, so this only matters when it is stuck.
const actionTimeout = 3 * time.Second

// Outcomes of a read, as Read.Outcome and the API report them.
const (
	OutStarted   = "started"   // a folder or station began
	OutContinued = "continued" // the card's folder was paused and plays on
	OutPaused    = "paused"    // same_card toggle_pause paused it
	OutRestarted = "restarted" // same_card restart: its folder from the first track
	OutSkipped   = "skipped"   // same_card next: the next track
	OutWaiting   = "waiting"   // calm mode: the folder starts when the track ends
	OutUnchanged = "unchanged" // the card's folder plays already
	OutDone      = "done"      // a command card did its command
	OutRepeat    = "repeat"    // the same id within Repeat: ignored
	OutUnknown   = "unknown"   // no mapping: remembered for the parent
	OutLearned   = "learned"   // teach mode took it; nothing played
	OutRefused   = "refused"   // the player or a parental rule said no
	OutFailed    = "failed"    // the command failed otherwise
)

// Player is the one command path (Do) and the status it acts on.
type Player interface {
	Status() player.Status
	Do(ctx context.Context, cmd player.Command) (player.Status, error)
}

// Catalog tells which folders exist (the library).
type Catalog interface {
	Folder(id string) (library.Folder, bool)
}

// Read is one card read and what came of it.
type Read struct {
	ID       string    `json:"id"`
	Device   string    `json:"device"`
	At       time.Time `json:"at"`
	Outcome  string    `json:"outcome"`
	Action   string    `json:"action,omitempty"`
	FolderID string    `json:"folder_id,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Options configure a Service. Store, Player and Catalog are required.
type Options struct {
	Store   *Store
	Player  Player
	Catalog Catalog
	// Resume returns the saved place in a folder (its track index), for
	// resume cards; nil or false: the folder starts from the beginning.
	Resume func(folderID string) (index int, ok bool)
	// SetCalm switches calm mode, for calm cards (a parent's setting,
	// saved with the settings); nil: calm cards are refused.
	SetCalm func(ctx context.Context, on bool) error
	// Chime plays a signal sound; nil: silent. It should return once the
	// sound has started (chime.Play on the player does).
	Chime func(ctx context.Context, s chime.Sound) error
	// UnknownFile keeps the unknown cards across restarts; "": in memory.
	UnknownFile string
	// OnRead hears every read but repeats: the hook for the event feed.
	OnRead func(Read)
	// OnError hears failures that do not stop anything (a sound that could
	// not play, the unknown list not saved), for the log.
	OnError func(error)
	// Clock: the repeat window and teach mode are durations, on its
	// uptime; reads are stamped with its wall clock. Nil: the machine's.
	Clock clock.Clock
}

// Service handles card reads. Its methods are safe for concurrent use.
type Service struct {
	o Options

	mu       sync.Mutex
	lastSeen map[string]time.Duration // uptime of each id's last read
	recent   []Read                   // newest first
	learn    learnState
	learnCh  chan struct{} // closed and replaced when learn changes
	unknown  unknownList
}

const maxRecent = 20

// New prepares a service; it loads the remembered unknown cards.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Player == nil || o.Catalog == nil {
		return nil, errors.New("cards: Store, Player and Catalog are required")
	}
	if o.Clock == nil {
		o.Clock = clock.NewSystem()
	}
	if o.OnError == nil {
		o.OnError = func(error) {}
	}
	s := &Service{o: o, lastSeen: map[string]time.Duration{}, learnCh: make(chan struct{})}
	err := s.unknown.load(o.UnknownFile)
	return s, err
}

// Card acts on a card id a reader typed. It returns when the card's sound
// has started and its command is done.
func (s *Service) Card(ctx context.Context, id, device string) {
	now, up := s.o.Clock.Now(), s.o.Clock.Uptime()
	r := Read{ID: id, Device: device, At: now}
	s.mu.Lock()
	last, seen := s.lastSeen[id]
	s.lastSeen[id] = up
	s.pruneSeen(up)
	if seen && up-last < Repeat {
		r.Outcome = OutRepeat
		s.remember(r)
		s.mu.Unlock()
		return
	}
	doc := s.o.Store.Get()
	m, known := doc.Cards[id]
	if s.learnTake(id, device, now, known, m) {
		r.Outcome = OutLearned
		s.remember(r)
		s.mu.Unlock()
		s.sound(ctx, doc, chime.Learned)
		s.publish(r)
		return
	}
	if !known {
		r.Outcome = OutUnknown
		s.remember(r)
		if err := s.unknown.add(id, device, now); err != nil {
			s.o.OnError(err)
		}
		s.mu.Unlock()
		s.sound(ctx, doc, chime.Unknown)
		s.publish(r)
		return
	}
	s.mu.Unlock()

	r.Action, r.FolderID = m.Action, m.FolderID
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	cmd, outcome := s.plan(m, doc.SameCard, s.o.Player.Status())
	s.sound(ctx, doc, chime.Known)
	r.Outcome = outcome
	if m.Action == ActCalm {
		if err := s.calm(ctx, *m.On); err != nil {
			r.Outcome, r.Error = OutFailed, fault.Message(err)
			s.sound(ctx, doc, chime.Refused)
		}
	} else if cmd != nil {
		ctx = auth.WithCaller(ctx, auth.Caller{Via: auth.Card})
		st, err := s.o.Player.Do(ctx, *cmd)
		if err == nil && r.Outcome == OutStarted && st.Waiting != nil && st.Waiting.FolderID == m.FolderID {
			r.Outcome = OutWaiting
		}
		if err != nil {
			r.Outcome, r.Error = OutFailed, fault.Message(err)
			switch fault.KindOf(err) {
			case fault.Forbidden, fault.Conflict, fault.Busy:
				r.Outcome = OutRefused
			}
			s.sound(ctx, doc, chime.Refused)
		}
	}
	s.mu.Lock()
	s.remember(r)
	s.mu.Unlock()
	s.publish(r)
}

// plan is the command a mapping means now. A card whose folder is loaded
// does not start it again: playing, it does the second tap (the card's
// same_card, else the document's); paused, it continues.
func (s *Service) plan(m Mapping, sameCard string, st player.Status) (*player.Command, string) {
	switch m.Action {
	case ActFolder, ActResume, ActRadio:
		if m.SameCard != "" {
			sameCard = m.SameCard
		}
		if st.FolderID != nil && *st.FolderID == m.FolderID {
			switch st.State {
			case player.Playing:
				switch sameCard {
				case SameCardTogglePause:
					return &player.Command{Action: player.ActPause}, OutPaused
				case SameCardRestart:
					return &player.Command{Action: player.ActFolder, FolderID: m.FolderID}, OutRestarted
				case SameCardNext:
					return &player.Command{Action: player.ActNext}, OutSkipped
				}
				return nil, OutUnchanged
			case player.Paused:
				return &player.Command{Action: player.ActPlay}, OutContinued
			}
		}
		if m.Action == ActResume && s.o.Resume != nil {
			if i, ok := s.o.Resume(m.FolderID); ok {
				return &player.Command{Action: player.ActResume, FolderID: m.FolderID, ItemIndex: &i}, OutStarted
			}
		}
		// A station plays with the folder command, as every client plays it.
		return &player.Command{Action: player.ActFolder, FolderID: m.FolderID, Mode: player.Mode(m.Mode)}, OutStarted
	case ActShuffle:
		on := *m.On
		return &player.Command{Action: player.ActShuffle, On: &on}, OutDone
	case ActRepeat:
		return &player.Command{Action: player.ActRepeat, Word: m.Word}, OutDone
	case ActCalm:
		return nil, OutDone // Card switches it through SetCalm
	case ActVolumeDelta, ActSleepTimer, ActSeekDelta:
		// sleep_timer is carried out by the parental rules behind the
		// player's gate (issue 12); the player checks its fields.
		v := *m.Normalized().Value
		return &player.Command{Action: m.Action, Value: &v}, OutDone
	}
	return &player.Command{Action: m.Action}, OutDone
}

func (s *Service) calm(ctx context.Context, on bool) error {
	if s.o.SetCalm == nil {
		return fault.New(fault.Unavailable, "calm mode cannot be switched on this box")
	}
	return s.o.SetCalm(ctx, on)
}

func (s *Service) sound(ctx context.Context, doc Doc, snd chime.Sound) {
	if s.o.Chime == nil || !doc.Sounds {
		return
	}
	if err := s.o.Chime(ctx, snd); err != nil && ctx.Err() == nil {
		s.o.OnError(err)
	}
}

func (s *Service) publish(r Read) {
	if s.o.OnRead != nil {
		s.o.OnRead(r)
	}
}

// remember keeps r among the recent reads; s.mu is held.
func (s *Service) remember(r Read) {
	s.recent = append([]Read{r}, s.recent...)
	if len(s.recent) > maxRecent {
		s.recent = s.recent[:maxRecent]
	}
}

// pruneSeen forgets ids not read within Repeat, so the map stays as small
// as the cards of the last two seconds; s.mu is held.
func (s *Service) pruneSeen(up time.Duration) {
	if len(s.lastSeen) < 64 {
		return
	}
	for id, t := range s.lastSeen {
		if up-t >= Repeat {
			delete(s.lastSeen, id)
		}
	}
}

// Recent returns the last reads, newest first.
func (s *Service) Recent() []Read {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Read{}, s.recent...)
}

// Doc returns the mappings.
func (s *Service) Doc() Doc { return s.o.Store.Get() }

// Put assigns a card, checking its folder against the library. The card
// leaves the unknown list.
func (s *Service) Put(id string, m Mapping) (Mapping, error) {
	if err := CheckID(id); err != nil {
		return Mapping{}, err
	}
	m = m.Normalized()
	if err := m.Validate(); err != nil {
		return Mapping{}, err
	}
	if err := s.checkFolder(m); err != nil {
		return Mapping{}, err
	}
	err := s.o.Store.Update(func(d *Doc) error {
		if _, ok := d.Cards[id]; !ok && len(d.Cards) >= MaxCards {
			return fault.New(fault.Conflict, "already %d cards; delete one first", MaxCards)
		}
		d.Cards[id] = m
		return nil
	})
	if err != nil {
		return Mapping{}, err
	}
	s.forgetUnknown(id)
	return m, nil
}

// Delete removes a card's mapping.
func (s *Service) Delete(id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	return s.o.Store.Update(func(d *Doc) error {
		if _, ok := d.Cards[id]; !ok {
			return fault.New(fault.NotFound, "card %s has no mapping", id)
		}
		delete(d.Cards, id)
		return nil
	})
}

// Replace sets the whole document, checking every folder.
func (s *Service) Replace(d Doc) error {
	if d.Cards == nil {
		d.Cards = map[string]Mapping{}
	}
	for _, id := range sortedIDs(d.Cards) {
		m := d.Cards[id].Normalized()
		d.Cards[id] = m
		if err := CheckID(id); err != nil {
			return err
		}
		if err := m.Validate(); err != nil {
			return fault.New(fault.Invalid, "card %s: %s", id, fault.Message(err))
		}
		if err := s.checkFolder(m); err != nil {
			return fault.New(fault.Invalid, "card %s: %s", id, fault.Message(err))
		}
	}
	if err := s.o.Store.Update(func(cur *Doc) error { *cur = d; return nil }); err != nil {
		return err
	}
	for id := range d.Cards {
		s.forgetUnknown(id)
	}
	return nil
}

// checkFolder refuses a folder the library does not have.
func (s *Service) checkFolder(m Mapping) error {
	if m.FolderID == "" {
		return nil
	}
	if _, ok := s.o.Catalog.Folder(m.FolderID); !ok {
		return fault.New(fault.Invalid, "folder_id %q is not in the library", m.FolderID)
	}
	return nil
}
