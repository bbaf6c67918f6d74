package radio

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/household"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Share moves the stations and podcasts into the household's shared
// folder, one file each, which Syncthing carries to the other boxes.
// Entries radio.json still holds (a box that kept them there before, a
// crash during the move) are moved first, each unless the household has a
// version of it already, which is newer; radio.json is then written empty.
// Restored: radio.json is a backup's that a restore put there (completed
// at this start after a crash), and its entries replace the household's as
// Reload's do. Called once, after New and before Run.
func (s *Service) Share(h *household.Store, restored bool) error {
	s.edit.Lock()
	defer s.edit.Unlock()
	s.shared = h
	cur := s.current()
	if restored {
		// The household's entries are the ones in use; the file's replace
		// them.
		// An entry this box cannot use stays as it is (reported).
		cfg, readErr := s.readShared()
		s.mu.Lock()
		s.cfg = cfg
		s.mu.Unlock()
		if err := s.saveShared(cur); err != nil {
			return errors.Join(readErr, err)
		}
		return errors.Join(readErr, s.writeEmpty())
	}
	var errs []error
	move := func(k household.Kind, id string, v any) {
		_, known, err := h.Get(k, id)
		if err == nil && !known {
			_, err = h.Put(k, id, v)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, st := range cur.Stations {
		move(household.Stations, st.ID, st)
	}
	for _, p := range cur.Podcasts {
		move(household.Podcasts, p.ID, p)
	}
	if len(errs) == 0 && len(cur.Stations)+len(cur.Podcasts) > 0 {
		errs = append(errs, s.writeEmpty())
	}
	return errors.Join(append(errs, s.useShared())...)
}

// writeEmpty leaves radio.json without entries: they are the household's.
func (s *Service) writeEmpty() error {
	empty := Config{Version: Version, Stations: []Station{}, Podcasts: []Podcast{}}
	if err := state.WriteJSON(filepath.Join(s.dir, FileName), empty); err != nil {
		return fault.Wrap(fault.Internal, err, "the radio settings could not be saved")
	}
	return nil
}

// readShared is the household's stations and podcasts, in the order they
// were added. An entry that does not pass the checks of a saved one (a
// newer box's, or one a file of another program made) is left out and
// reported; the others are used.
func (s *Service) readShared() (Config, error) {
	cfg := Config{Version: Version, Stations: []Station{}, Podcasts: []Podcast{}}
	p := s.opts.Policy.Saved()
	stations, err := s.shared.List(household.Stations)
	errs := []error{err}
	for _, it := range stations {
		var st Station
		err := json.Unmarshal(it.Value, &st)
		if err == nil {
			err = st.check(p)
		}
		if err == nil && st.ID != it.ID {
			err = errors.New("id differs from the file's")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("station %s: %w", it.ID, err))
			continue
		}
		cfg.Stations = append(cfg.Stations, st)
	}
	podcasts, err := s.shared.List(household.Podcasts)
	errs = append(errs, err)
	for _, it := range podcasts {
		var pc Podcast
		err := json.Unmarshal(it.Value, &pc)
		if err == nil {
			err = pc.check(p)
		}
		if err == nil && pc.ID != it.ID {
			err = errors.New("id differs from the file's")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("podcast %s: %w", it.ID, err))
			continue
		}
		cfg.Podcasts = append(cfg.Podcasts, pc)
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, fmt.Errorf("radio: shared entries: %w", err)
	}
	return cfg, nil
}

// useShared makes the household's entries the ones in use, and tells of
// them when they differ. Callers hold s.edit.
func (s *Service) useShared() error {
	cfg, err := s.readShared()
	old := s.current()
	if reflect.DeepEqual(cfg, old) {
		return err
	}
	// A cover changed or gone, here or on another box, is fetched anew or
	// not kept.
	for _, o := range old.Stations {
		if i := slices.IndexFunc(cfg.Stations, func(x Station) bool { return x.ID == o.ID }); i < 0 || cfg.Stations[i].Cover != o.Cover {
			_ = os.Remove(s.coverPath(o.ID))
		}
	}
	s.mu.Lock()
	s.cfg = cfg
	s.rebuild()
	s.mu.Unlock()
	s.poke() // a podcast from another box is fetched here too
	s.opts.OnChange()
	return err
}

// ReloadShared reads the household's stations and podcasts again, after
// Syncthing brought changes.
func (s *Service) ReloadShared() error {
	s.edit.Lock()
	defer s.edit.Unlock()
	if s.shared == nil {
		return nil
	}
	return s.useShared()
}

// saveShared is save for a shared service: one file per entry changed, a
// tombstone per entry removed. Only the changes are checked against the
// limits, as two boxes' entries merged may exceed them and must stay
// editable. A failure part of the way leaves each entry either changed or
// not, and the entries on disk in use. Callers hold s.edit.
func (s *Service) saveShared(cfg Config) error {
	old := s.current()
	changed := Config{Version: cfg.Version}
	for _, st := range cfg.Stations {
		if i := slices.IndexFunc(old.Stations, func(o Station) bool { return o.ID == st.ID }); i < 0 || old.Stations[i] != st {
			changed.Stations = append(changed.Stations, st)
		}
	}
	for _, p := range cfg.Podcasts {
		if i := slices.IndexFunc(old.Podcasts, func(o Podcast) bool { return o.ID == p.ID }); i < 0 || old.Podcasts[i] != p {
			changed.Podcasts = append(changed.Podcasts, p)
		}
	}
	if err := changed.Validate(s.opts.Policy); err != nil {
		return err
	}
	if n := len(cfg.Stations); n > MaxStations && n > len(old.Stations) {
		return fault.New(fault.Invalid, "at most %d stations", MaxStations)
	}
	if n := len(cfg.Podcasts); n > MaxPodcasts && n > len(old.Podcasts) {
		return fault.New(fault.Invalid, "at most %d podcasts", MaxPodcasts)
	}
	var errs []error
	for _, st := range changed.Stations {
		if _, err := s.shared.Put(household.Stations, st.ID, st); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range changed.Podcasts {
		if _, err := s.shared.Put(household.Podcasts, p.ID, p); err != nil {
			errs = append(errs, err)
		}
	}
	for _, st := range old.Stations {
		if !slices.ContainsFunc(cfg.Stations, func(x Station) bool { return x.ID == st.ID }) {
			if _, err := s.shared.Delete(household.Stations, st.ID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, p := range old.Podcasts {
		if !slices.ContainsFunc(cfg.Podcasts, func(x Podcast) bool { return x.ID == p.ID }) {
			if _, err := s.shared.Delete(household.Podcasts, p.ID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// An entry of another box that this one cannot use is not this save's
	// failure: it was reported when it arrived (ReloadShared).
	_ = s.useShared()
	if err := errors.Join(errs...); err != nil {
		return fault.Wrap(fault.Internal, err, "the radio settings could not be saved")
	}
	return nil
}

// readConfig is radio.json as a backup holds it: the shared entries, when
// shared. Nil when there are none.
func (s *Service) readConfig() ([]byte, error) {
	c := s.current()
	if len(c.Stations)+len(c.Podcasts) == 0 {
		return nil, nil
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("radio: %w", err)
	}
	return append(data, '\n'), nil
}
