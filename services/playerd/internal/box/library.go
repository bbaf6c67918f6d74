package box

import (
	"context"
	"io"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/library"
)

// LibraryAdmin changes the media directory for a parent and carries what
// refers to a folder's path along: resume points and navigation rows
// follow a rename, and everyone showing folders hears of every change.
type LibraryAdmin struct{ b *Box }

// LibraryAdmin is the parent's management of the media directory.
func (b *Box) LibraryAdmin() LibraryAdmin { return LibraryAdmin{b} }

func (l LibraryAdmin) Dirs() ([]library.Dir, error) { return l.b.lib.Dirs() }

func (l LibraryAdmin) Limits() library.Limits { return l.b.lib.Limits() }

func (l LibraryAdmin) CreateFolder(parent, name string) (library.Dir, error) {
	d, err := l.b.lib.CreateFolder(parent, name)
	if err == nil {
		l.b.catalogChanged(events.CatalogLibrary)
	}
	return d, err
}

func (l LibraryAdmin) RenameFolder(id, name string) (library.Dir, error) {
	d, c, err := l.b.lib.RenameFolder(id, name)
	l.follow(c)
	return d, err
}

func (l LibraryAdmin) DeleteFolder(id string) error {
	c, err := l.b.lib.DeleteFolder(id)
	l.follow(c)
	return err
}

// follow updates what refers to folders after a rename or delete, which
// may have happened on disk even when an error is returned: a failure here
// is logged, not undone.
func (l LibraryAdmin) follow(c library.Change) {
	b := l.b
	if len(c.Moves) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.player.MoveFolders(ctx, c.Moves); err != nil {
			b.log.Error("resume points did not follow the folders", "error", err)
		}
	}
	if nav := b.nav.Load(); nav != nil && c.To != "" {
		if n := nav.Clone(); n.Renamed(c.From, c.To) {
			if err := home.Save(b.cfg.Data, n); err != nil {
				b.log.Error("navigation did not follow the rename", "error", err)
			} else {
				b.nav.Store(n)
			}
		}
	}
	b.catalogChanged(events.CatalogLibrary)
}

// BeginUpload starts an all-or-nothing upload into a folder.
func (l LibraryAdmin) BeginUpload(id string, size int64) (library.Pending, error) {
	u, err := l.b.lib.BeginUpload(id, size)
	if err != nil {
		return nil, err
	}
	return upload{u, l.b}, nil
}

// upload is one upload in progress; its commit is a change of the catalog.
type upload struct {
	*library.Upload
	b *Box
}

func (u upload) Commit() ([]library.File, error) {
	files, err := u.Upload.Commit()
	if len(files) > 0 {
		u.b.catalogChanged(events.CatalogLibrary)
	}
	return files, err
}

func (l LibraryAdmin) SetCover(id string, r io.Reader) (library.Dir, error) {
	d, err := l.b.lib.SetCover(id, r)
	if err == nil {
		l.b.catalogChanged(events.CatalogLibrary)
	}
	return d, err
}
