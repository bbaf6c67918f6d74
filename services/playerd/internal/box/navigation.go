package box

import (
	"github.com/storybox/storybox/services/playerd/internal/events"
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
	if c := b.nav.Load(); c != nil {
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
	if err := home.Save(b.cfg.Data, c); err != nil {
		return err
	}
	b.nav.Store(c.Clone())
	b.publish(events.KindSettings, SettingsEvent{[]string{"navigation"}})
	return nil
}

// loadNavigation reads home.json (at start, after a restore).
func (b *Box) loadNavigation() error {
	c, err := home.LoadConfig(b.cfg.Data)
	b.nav.Store(c)
	return err
}

// restoredNavigation is loadNavigation after a restore, which clients hear
// of.
func (b *Box) restoredNavigation() error {
	err := b.loadNavigation()
	b.publish(events.KindSettings, SettingsEvent{[]string{"navigation"}})
	return err
}
