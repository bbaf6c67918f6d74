package box

import (
	"sync"
	"sync/atomic"

	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/lang"
)

// Home is the home screen's model (GET /api/home, the touch screen): the
// navigation, the folders a child may see and where each was left.
func (b *Box) Home() home.Home {
	folders, resume := b.visible(b.catalog.Folders(), b.saved.Load().Resume)
	return home.Build(b.Navigation(), folders, resume, lang.Of(b.settings.Get().Language).UI)
}

// Navigation is the home screen's navigation: the parent's, or the one
// derived from the library.
func (b *Box) Navigation() *home.Config {
	if c := b.nav.get(); c != nil {
		return c
	}
	return home.WithStreams(home.Defaults(b.lib.TopLevel()))
}

// PutNavigation checks a parent's navigation (its fields, and that every
// library path it names is a folder), saves it and only then uses it.
func (b *Box) PutNavigation(c *home.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := c.CheckFolders(b.lib.HasDir); err != nil {
		return err
	}
	return b.nav.put(c)
}

// navStore is the parent's navigation (home.json): nil while none was
// saved (derived from the library). Every change is on disk before it is
// used, and then told (changed).
type navStore struct {
	dir     string
	changed func()
	mu      sync.Mutex // one change at a time
	cur     atomic.Pointer[home.Config]
}

func (s *navStore) get() *home.Config { return s.cur.Load() }

// load reads home.json at start.
func (s *navStore) load() error {
	c, err := home.LoadConfig(s.dir)
	s.cur.Store(c)
	return err
}

// reload reads home.json after a restore replaced it.
func (s *navStore) reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.load()
	s.changed()
	return err
}

func (s *navStore) put(c *home.Config) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := home.Save(s.dir, c); err != nil {
		return err
	}
	s.cur.Store(c.Clone())
	s.changed()
	return nil
}

// renamed makes the parent's rows follow a folder renamed from to to;
// without a parent's navigation or a row naming it, nothing changes.
func (s *navStore) renamed(from, to string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.cur.Load()
	if cur == nil {
		return nil
	}
	n := cur.Clone()
	if !n.Renamed(from, to) {
		return nil
	}
	if err := home.Save(s.dir, n); err != nil {
		return err
	}
	s.cur.Store(n)
	s.changed()
	return nil
}
