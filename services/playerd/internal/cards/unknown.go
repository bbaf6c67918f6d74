package cards

import (
	"errors"
	"io/fs"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// UnknownFileName keeps the cards read but not assigned, so a parent can
// assign them after a restart too. Not part of the backup: it is what a
// child did, not what a parent configured.
const UnknownFileName = "cards-unknown.json"

// maxUnknown is how many unknown cards are remembered.
const maxUnknown = 20

// Unknown is a card read that has no mapping.
type Unknown struct {
	ID        string    `json:"id"`
	Device    string    `json:"device"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Count     int       `json:"count"`
}

// unknownList is newest first; the Service's mutex guards it.
type unknownList struct {
	path  string
	cards []Unknown
}

func (u *unknownList) load(path string) error {
	u.path = path
	if path == "" {
		return nil
	}
	var cards []Unknown
	err := state.ReadJSON(path, &cards)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err // a list that cannot be read starts empty
	}
	for _, c := range cards {
		if CheckID(c.ID) == nil && len(u.cards) < maxUnknown {
			u.cards = append(u.cards, c)
		}
	}
	return nil
}

func (u *unknownList) add(id, device string, now time.Time) error {
	c := Unknown{ID: id, Device: device, FirstSeen: now, LastSeen: now, Count: 1}
	for i, old := range u.cards {
		if old.ID == id {
			c.FirstSeen, c.Count = old.FirstSeen, old.Count+1
			u.cards = append(u.cards[:i], u.cards[i+1:]...)
			break
		}
	}
	u.cards = append([]Unknown{c}, u.cards...)
	if len(u.cards) > maxUnknown {
		u.cards = u.cards[:maxUnknown]
	}
	return u.save()
}

func (u *unknownList) remove(id string) (bool, error) {
	for i, c := range u.cards {
		if c.ID == id {
			u.cards = append(u.cards[:i], u.cards[i+1:]...)
			return true, u.save()
		}
	}
	return false, nil
}

func (u *unknownList) save() error {
	if u.path == "" {
		return nil
	}
	return state.WriteJSON(u.path, u.cards)
}

// Unknown returns the cards read but not assigned, most recent first.
// A card another box of the household mapped meanwhile is known here too
// and is left out.
func (s *Service) Unknown() []Unknown {
	known := s.o.Store.Get().Cards
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Unknown{}
	for _, u := range s.unknown.cards {
		if _, ok := known[u.ID]; !ok {
			out = append(out, u)
		}
	}
	return out
}

// ForgetUnknown removes a card from the unknown list.
func (s *Service) ForgetUnknown(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	found, err := s.unknown.remove(id)
	if err != nil {
		return err
	}
	if !found {
		return errNotUnknown(id)
	}
	return nil
}

func (s *Service) forgetUnknown(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.unknown.remove(id); err != nil {
		s.o.OnError(err)
	}
}

func errNotUnknown(id string) error {
	return fault.New(fault.NotFound, "card %s is not among the unknown cards", id)
}
