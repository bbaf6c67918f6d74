package radio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/household"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/podcast"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Files the service derives, in the data directory; neither is in backups
// (both are fetched again).
const (
	cacheFile = "podcast-cache.json"
	coverDir  = "radio-covers"
)

// Options tune the service; zero values are the defaults.
type Options struct {
	Policy fetch.Policy
	// RefreshEvery is how old a feed may get before it is fetched again:
	// 6 h. FeedTimeout bounds one fetch: 30 s.
	RefreshEvery, FeedTimeout time.Duration
	// OnChange hears of every change of the folders (a new station, a
	// refreshed feed); it must not block.
	OnChange func()
	// Clock: a feed fetched in this run is due RefreshEvery of its uptime
	// later; one known only from the cache, by the age of its wall-clock
	// date (a date in the future means the clock stepped back or is not
	// set yet, and makes it due). Nil: the machine's clock.
	Clock clock.Clock
}

// Service keeps the configuration and the feeds. It is safe for concurrent
// use.
type Service struct {
	dir    string
	opts   Options
	client *http.Client
	wake   chan struct{}

	edit sync.Mutex // one change of radio.json at a time
	// shared holds the entries once Share was called; radio.json is then
	// only where a restore puts them.
	shared *household.Store
	mu     sync.RWMutex
	cfg    Config
	// feeds by podcast id, what the last refresh found; saved to cacheFile.
	feeds   map[string]*feedState
	folders []library.Folder
	byID    map[string]int
}

type feedState struct {
	Feed      podcast.Feed  `json:"feed"`
	Cache     podcast.Cache `json:"cache"`
	URL       string        `json:"url"` // the feed the state is of
	CheckedAt time.Time     `json:"checked_at"`
	Error     string        `json:"error,omitempty"`
	// checkedUp is the uptime of the fetch, when it was in this run.
	checkedUp time.Duration
	thisRun   bool
}

// New loads radio.json and the feed cache from dir. A file that cannot be
// read is reported and the service starts empty; it saves only what a
// parent changes later.
func New(dir string, o Options) (*Service, error) {
	if o.RefreshEvery <= 0 {
		o.RefreshEvery = 6 * time.Hour
	}
	if o.FeedTimeout <= 0 {
		o.FeedTimeout = 30 * time.Second
	}
	if o.OnChange == nil {
		o.OnChange = func() {}
	}
	if o.Clock == nil {
		o.Clock = clock.NewSystem()
	}
	s := &Service{dir: dir, opts: o, wake: make(chan struct{}, 1),
		client: o.Policy.Client(fetch.Options{ReadTimeout: 15 * time.Second}),
		cfg:    Config{Version: Version, Stations: []Station{}, Podcasts: []Podcast{}}, feeds: map[string]*feedState{}}
	var cached map[string]*feedState
	if err := state.ReadJSON(filepath.Join(dir, cacheFile), &cached); err == nil {
		s.feeds = cached
	}
	err := s.Reload()
	return s, err
}

// Reload reads radio.json again (at start, after a restore).
func (s *Service) Reload() error {
	data, err := os.ReadFile(filepath.Join(s.dir, FileName))
	cfg := Config{Version: Version, Stations: []Station{}, Podcasts: []Podcast{}}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	case err == nil:
		cfg, err = Parse(data, s.opts.Policy)
	}
	if err != nil {
		return fmt.Errorf("radio: %s: %w (no stations or podcasts until it is fixed or saved anew)", FileName, err)
	}
	s.edit.Lock()
	if s.shared != nil {
		// A restore: the backup's entries replace the household's.
		defer s.edit.Unlock()
		if err := s.saveShared(cfg); err != nil {
			return err
		}
		return s.writeEmpty()
	}
	s.edit.Unlock()
	s.mu.Lock()
	s.cfg = cfg
	s.rebuild()
	s.mu.Unlock()
	s.poke()
	s.opts.OnChange()
	return nil
}

// Read returns radio.json as the box has it, for backups; nil when the
// parent configured nothing.
func (s *Service) Read() ([]byte, error) {
	s.edit.Lock()
	shared := s.shared != nil
	s.edit.Unlock()
	if shared {
		return s.readConfig()
	}
	data, err := os.ReadFile(filepath.Join(s.dir, FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// poke makes Run look at feeds and covers now.
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// save writes cfg and, once it is on disk, makes it the one in use.
// Callers hold s.edit.
func (s *Service) save(cfg Config) error {
	if s.shared != nil {
		return s.saveShared(cfg)
	}
	if err := cfg.Validate(s.opts.Policy); err != nil {
		return err
	}
	if err := state.WriteJSON(filepath.Join(s.dir, FileName), cfg); err != nil {
		return fault.Wrap(fault.Internal, err, "the radio settings could not be saved")
	}
	s.mu.Lock()
	s.cfg = cfg
	s.rebuild()
	s.mu.Unlock()
	s.poke()
	s.opts.OnChange()
	return nil
}

func (s *Service) current() Config {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := s.cfg
	c.Stations = slices.Clone(c.Stations)
	c.Podcasts = slices.Clone(c.Podcasts)
	return c
}

// Stations lists the stations.
func (s *Service) Stations() []Station { return s.current().Stations }

// AddStation adds a station with a new id.
func (s *Service) AddStation(st Station) (Station, error) {
	s.edit.Lock()
	defer s.edit.Unlock()
	c := s.current()
	if len(c.Stations) >= MaxStations {
		return Station{}, fault.New(fault.Conflict, "there are %d stations already, the most the box keeps", MaxStations)
	}
	st.ID = newID()
	if err := st.check(s.opts.Policy); err != nil {
		return Station{}, err
	}
	c.Stations = append(c.Stations, st)
	return st, s.save(c)
}

// UpdateStation replaces the station id.
func (s *Service) UpdateStation(id string, st Station) (Station, error) {
	if !validID(id) {
		return Station{}, fault.New(fault.NotFound, "no station %q", id)
	}
	st.ID = id
	if err := st.check(s.opts.Policy); err != nil {
		return Station{}, err // bad input before an unknown id, as for a podcast
	}
	s.edit.Lock()
	defer s.edit.Unlock()
	c := s.current()
	i := slices.IndexFunc(c.Stations, func(x Station) bool { return x.ID == id })
	if i < 0 {
		return Station{}, fault.New(fault.NotFound, "no station %q", id)
	}
	old := c.Stations[i]
	c.Stations[i] = st
	if err := s.save(c); err != nil {
		return Station{}, err
	}
	if old.Cover != st.Cover {
		_ = os.Remove(s.coverPath(id)) // fetched anew from the new address
	}
	return st, nil
}

// DeleteStation removes the station id.
func (s *Service) DeleteStation(id string) error {
	s.edit.Lock()
	defer s.edit.Unlock()
	c := s.current()
	i := slices.IndexFunc(c.Stations, func(x Station) bool { return x.ID == id })
	if i < 0 {
		return fault.New(fault.NotFound, "no station %q", id)
	}
	c.Stations = slices.Delete(c.Stations, i, i+1)
	if err := s.save(c); err != nil {
		return err
	}
	_ = os.Remove(s.coverPath(id))
	return nil
}

// PodcastView is a podcast as the admin page shows it.
type PodcastView struct {
	Podcast
	Title       string     `json:"title"` // the feed's
	Episodes    int        `json:"episodes"`
	RefreshedAt *time.Time `json:"refreshed_at"` // the last successful check
	Error       *string    `json:"error"`        // why the last refresh failed
}

// Podcasts lists the podcasts with what their feeds gave.
func (s *Service) Podcasts() []PodcastView {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []PodcastView{}
	for _, p := range s.cfg.Podcasts {
		out = append(out, s.view(p))
	}
	return out
}

func (s *Service) view(p Podcast) PodcastView {
	v := PodcastView{Podcast: p}
	if f := s.feeds[p.ID]; f != nil && f.URL == p.URL {
		v.Title, v.Episodes = f.Feed.Title, len(f.Feed.Episodes)
		if !f.CheckedAt.IsZero() {
			t := f.CheckedAt
			v.RefreshedAt = &t
		}
		if f.Error != "" {
			e := f.Error
			v.Error = &e
		}
	}
	return v
}

// AddPodcast subscribes to a feed. The feed is fetched first: an address
// that gives no podcast feed is refused with the reason.
func (s *Service) AddPodcast(ctx context.Context, p Podcast) (PodcastView, error) {
	p.ID = newID()
	if err := p.check(s.opts.Policy); err != nil {
		return PodcastView{}, err
	}
	fs, err := s.fetchFeed(ctx, p.URL, nil)
	if err != nil {
		return PodcastView{}, err
	}
	s.edit.Lock()
	defer s.edit.Unlock()
	c := s.current()
	if len(c.Podcasts) >= MaxPodcasts {
		return PodcastView{}, fault.New(fault.Conflict, "there are %d podcasts already, the most the box keeps", MaxPodcasts)
	}
	c.Podcasts = append(c.Podcasts, p)
	s.mu.Lock()
	s.feeds[p.ID] = fs
	s.mu.Unlock()
	if err := s.save(c); err != nil {
		s.mu.Lock()
		delete(s.feeds, p.ID)
		s.mu.Unlock()
		return PodcastView{}, err
	}
	s.saveCache()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.view(p), nil
}

// UpdatePodcast changes a podcast's name or feed address (a new address is
// fetched first, as when adding).
func (s *Service) UpdatePodcast(ctx context.Context, id string, p Podcast) (PodcastView, error) {
	p.ID = id
	if err := p.check(s.opts.Policy); err != nil {
		return PodcastView{}, err
	}
	old, ok := s.podcast(id)
	if !ok {
		return PodcastView{}, fault.New(fault.NotFound, "no podcast %q", id)
	}
	var fs *feedState
	if old.URL != p.URL {
		var err error
		if fs, err = s.fetchFeed(ctx, p.URL, nil); err != nil {
			return PodcastView{}, err
		}
	}
	s.edit.Lock()
	defer s.edit.Unlock()
	c := s.current()
	i := slices.IndexFunc(c.Podcasts, func(x Podcast) bool { return x.ID == id })
	if i < 0 {
		return PodcastView{}, fault.New(fault.NotFound, "no podcast %q", id)
	}
	c.Podcasts[i] = p
	if fs != nil {
		s.mu.Lock()
		s.feeds[id] = fs
		s.mu.Unlock()
		defer s.saveCache()
	}
	if err := s.save(c); err != nil {
		return PodcastView{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.view(p), nil
}

// DeletePodcast unsubscribes.
func (s *Service) DeletePodcast(id string) error {
	s.edit.Lock()
	defer s.edit.Unlock()
	c := s.current()
	i := slices.IndexFunc(c.Podcasts, func(x Podcast) bool { return x.ID == id })
	if i < 0 {
		return fault.New(fault.NotFound, "no podcast %q", id)
	}
	c.Podcasts = slices.Delete(c.Podcasts, i, i+1)
	if err := s.save(c); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.feeds, id)
	s.mu.Unlock()
	s.saveCache()
	_ = os.Remove(s.coverPath(id))
	return nil
}

// RefreshPodcast fetches a feed now.
func (s *Service) RefreshPodcast(ctx context.Context, id string) (PodcastView, error) {
	p, ok := s.podcast(id)
	if !ok {
		return PodcastView{}, fault.New(fault.NotFound, "no podcast %q", id)
	}
	if err := s.refresh(ctx, p); err != nil {
		return PodcastView{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.view(p), nil
}

func (s *Service) podcast(id string) (Podcast, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i := slices.IndexFunc(s.cfg.Podcasts, func(x Podcast) bool { return x.ID == id })
	if i < 0 {
		return Podcast{}, false
	}
	return s.cfg.Podcasts[i], true
}

// fetchFeed gets a feed, conditionally when old has validators; episodes the
// box must not fetch are left out.
func (s *Service) fetchFeed(ctx context.Context, raw string, old *feedState) (*feedState, error) {
	u, err := s.opts.Policy.CheckURL(raw)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "url")
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.FeedTimeout)
	defer cancel()
	var cache podcast.Cache
	if old != nil && old.URL == raw {
		cache = old.Cache
	}
	f, next, changed, err := podcast.Fetch(ctx, s.client, u, cache)
	if err != nil {
		if fault.KindOf(err) == fault.Internal {
			err = fault.Wrap(fault.Unavailable, err, "the feed could not be fetched: "+fetch.Describe(err))
		}
		return nil, err
	}
	fs := &feedState{URL: raw, Cache: next, CheckedAt: s.opts.Clock.Now().UTC(), checkedUp: s.opts.Clock.Uptime(), thisRun: true}
	if !changed {
		fs.Feed = old.Feed
		return fs, nil
	}
	eps := f.Episodes[:0]
	for _, e := range f.Episodes {
		if _, err := s.opts.Policy.CheckURL(e.URL); err == nil {
			eps = append(eps, e)
		}
	}
	f.Episodes = eps
	fs.Feed = f
	return fs, nil
}

// refresh fetches one feed and keeps what it gave; a failure keeps the
// episodes of the last good fetch and records why.
func (s *Service) refresh(ctx context.Context, p Podcast) error {
	s.mu.RLock()
	old := s.feeds[p.ID]
	s.mu.RUnlock()
	fs, err := s.fetchFeed(ctx, p.URL, old)
	s.mu.Lock()
	if _, still := s.indexPodcast(p.ID); !still {
		s.mu.Unlock()
		return fault.New(fault.NotFound, "no podcast %q", p.ID)
	}
	if err != nil {
		if old == nil || old.URL != p.URL {
			old = &feedState{URL: p.URL, Feed: podcast.Feed{Episodes: []podcast.Episode{}}}
		}
		kept := *old
		kept.Error = fault.Message(err)
		s.feeds[p.ID] = &kept
	} else {
		s.feeds[p.ID] = fs
		s.rebuild()
	}
	s.mu.Unlock()
	s.saveCache()
	if err == nil {
		s.opts.OnChange()
	}
	return err
}

// due tells whether p's feed is to be fetched, at wall time now and uptime
// up.
func (s *Service) due(f *feedState, p Podcast, now time.Time, up time.Duration) bool {
	switch {
	case f == nil || f.URL != p.URL:
		return true
	case f.thisRun:
		return up-f.checkedUp >= s.opts.RefreshEvery
	}
	age := now.Sub(f.CheckedAt)
	return age < 0 || age >= s.opts.RefreshEvery
}

func (s *Service) indexPodcast(id string) (int, bool) {
	i := slices.IndexFunc(s.cfg.Podcasts, func(x Podcast) bool { return x.ID == id })
	return i, i >= 0
}

// saveCache writes the feeds; a failure costs a fetch after the next start.
func (s *Service) saveCache() {
	s.mu.RLock()
	data := make(map[string]*feedState, len(s.feeds))
	for id, f := range s.feeds {
		if _, ok := s.indexPodcast(id); ok {
			data[id] = f
		}
	}
	s.mu.RUnlock()
	_ = state.WriteJSON(filepath.Join(s.dir, cacheFile), data) // the episodes are in memory; only a restart would miss them
}

// Run refreshes feeds when they are due and fetches missing covers, until
// ctx ends.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		s.refreshDue(ctx)
		s.fetchCovers(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

func (s *Service) refreshDue(ctx context.Context) {
	now, up := s.opts.Clock.Now(), s.opts.Clock.Uptime()
	s.mu.RLock()
	var due []Podcast
	for _, p := range s.cfg.Podcasts {
		if s.due(s.feeds[p.ID], p, now, up) {
			due = append(due, p)
		}
	}
	s.mu.RUnlock()
	for _, p := range due {
		if ctx.Err() != nil {
			return
		}
		_ = s.refresh(ctx, p) // recorded in the feed's state, shown on the admin page
	}
}
