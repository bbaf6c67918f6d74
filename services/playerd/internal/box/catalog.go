package box

import (
	"errors"
	"slices"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/radio"
)

// Catalog is the media library and the parent's stations and podcasts as
// one set of folders. It is the only catalog the core hands out: a station
// is a folder wherever a folder id is taken (commands, cards, the parental
// rules, the home screen, resume points, the home-automation API, MPRIS,
// covers), so no consumer can know less of it than another.
type Catalog struct {
	lib   *library.Library
	radio *radio.Service
}

// Folders lists the library's folders, then the stations and podcasts.
func (c *Catalog) Folders() []library.Folder {
	return append(slices.Clip(c.lib.Folders()), c.radio.Folders()...)
}

// Folder finds a folder of any kind by id.
func (c *Catalog) Folder(id string) (library.Folder, bool) {
	if f, ok := c.lib.Folder(id); ok {
		return f, true
	}
	return c.radio.Folder(id)
}

// Cover is a folder's cover, whatever kind of folder it is.
func (c *Catalog) Cover(id string) ([]byte, string, error) {
	data, typ, err := c.lib.Cover(id)
	if errors.Is(err, library.ErrNotFound) {
		return c.radio.Cover(id)
	}
	return data, typ, err
}

// Scan scans the media library again (stations and podcasts are not
// scanned: their folders change when the parent or a feed changes them).
func (c *Catalog) Scan() (library.Stats, error) { return c.lib.Scan() }
