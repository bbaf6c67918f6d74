package cards

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/household"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Share moves the mappings into the household's shared folder, where each
// card is a file of its own that Syncthing carries to the other boxes;
// cards.json keeps only this box's same_card and sounds. Mappings that
// cards.json still holds (a box that kept them there before, a crash
// during the move) are moved first, each unless the household has a
// version of that card already, which is newer: cards.json is then written
// without them. Restored: cards.json is a backup's that a restore put there
// (completed at this start after a crash), and its mappings replace the
// household's as Reload's do. Called once, after Load and before any
// change.
func (s *Store) Share(h *household.Store, restored bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shared = h
	if restored {
		return s.replaceShared()
	}
	var errs []error
	if len(s.doc.Cards) > 0 {
		for _, id := range sortedIDs(s.doc.Cards) {
			_, known, err := h.Get(household.Cards, id)
			if err == nil && !known {
				_, err = h.Put(household.Cards, id, s.doc.Cards[id])
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) == 0 {
			errs = append(errs, s.writeLocal(s.doc))
		}
	}
	cards, err := s.readShared()
	s.doc.Cards = cards
	return errors.Join(append(errs, err)...)
}

// readShared is the household's live mappings. One that is not a valid
// mapping (a newer box's action) is left out and reported; the others are
// used. s.mu is held.
func (s *Store) readShared() (map[string]Mapping, error) {
	items, err := s.shared.List(household.Cards)
	errs := []error{err}
	cards := make(map[string]Mapping, len(items))
	for _, it := range items {
		var m Mapping
		if err := json.Unmarshal(it.Value, &m); err != nil {
			errs = append(errs, fmt.Errorf("card %s: %w", it.ID, err))
			continue
		}
		if err := CheckID(it.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := m.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("card %s: %w", it.ID, err))
			continue
		}
		cards[it.ID] = m
	}
	if err := errors.Join(errs...); err != nil {
		return cards, fmt.Errorf("cards: shared mappings: %w", err)
	}
	return cards, nil
}

// ReloadShared reads the household's mappings again, after Syncthing
// brought changes; the feed is told when they differ from those in use.
func (s *Store) ReloadShared() error {
	s.mu.Lock()
	if s.shared == nil {
		s.mu.Unlock()
		return nil
	}
	cards, err := s.readShared()
	same := reflect.DeepEqual(cards, s.doc.Cards)
	if !same {
		s.doc.Cards = cards
	}
	s.mu.Unlock()
	if !same {
		s.changed()
	}
	return err
}

// writeLocal writes cards.json without the mappings. s.mu is held.
func (s *Store) writeLocal(d Doc) error {
	local := d.clone()
	local.Cards = map[string]Mapping{}
	data, err := Encode(local)
	if err != nil {
		return err
	}
	if err := state.WriteFile(s.path, data); err != nil {
		return fault.Wrap(fault.Internal, err, "card mappings could not be saved")
	}
	return nil
}

// updateShared is update for a shared store: cards.json when the box's
// own settings changed, then one file per card changed. A failure part of
// the way leaves every card either changed or not; the store reads back
// what is on disk. s.mu is held.
func (s *Store) updateShared(f func(*Doc) error) error {
	old := s.doc.clone()
	d := s.doc.clone()
	if err := f(&d); err != nil {
		return err
	}
	changed := Doc{Version: d.Version, SameCard: d.SameCard, Sounds: d.Sounds, Cards: map[string]Mapping{}}
	for id, m := range d.Cards {
		if o, ok := old.Cards[id]; !ok || !reflect.DeepEqual(o, m) {
			changed.Cards[id] = m
		}
	}
	// Only the changes are checked against the limit: two boxes' cards
	// merged may exceed it, and must stay editable.
	if err := changed.Validate(); err != nil {
		return err
	}
	if len(d.Cards) > MaxCards && len(d.Cards) > len(old.Cards) {
		return fault.New(fault.Invalid, "at most %d cards", MaxCards)
	}
	if d.SameCard != old.SameCard || d.Sounds != old.Sounds || !s.saved {
		if err := s.writeLocal(d); err != nil {
			return err
		}
		s.doc.SameCard, s.doc.Sounds, s.saved = d.SameCard, d.Sounds, true
	}
	var errs []error
	for _, id := range sortedIDs(changed.Cards) {
		if _, err := s.shared.Put(household.Cards, id, d.Cards[id]); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range sortedIDs(old.Cards) {
		if _, ok := d.Cards[id]; !ok {
			if _, err := s.shared.Delete(household.Cards, id); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		s.doc.Cards = maps.Clone(d.Cards)
		return nil
	}
	if cards, err := s.readShared(); err == nil {
		s.doc.Cards = cards
	}
	return fault.Wrap(fault.Internal, errors.Join(errs...), "card mappings could not be saved")
}
