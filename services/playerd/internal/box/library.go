package box

import (
	"context"
	"io"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
)

// LibraryAdmin changes the media directory for a parent and carries what
// refers to a folder's path along: resume points and navigation rows
// follow a rename. The library tells of each change itself.
type LibraryAdmin struct{ b *Box }

// LibraryAdmin is the parent's management of the media directory.
func (b *Box) LibraryAdmin() LibraryAdmin { return LibraryAdmin{b} }

func (l LibraryAdmin) Dirs() ([]library.Dir, error) { return l.b.lib.Dirs() }

func (l LibraryAdmin) Limits() library.Limits { return l.b.lib.Limits() }

func (l LibraryAdmin) CreateFolder(parent, name string) (library.Dir, error) {
	return l.b.lib.CreateFolder(parent, name)
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
		if err := b.modes.moved(c.Moves); err != nil {
			b.log.Error("folder modes did not follow the folders", "error", err)
		}
	}
	if c.To != "" {
		if err := b.nav.renamed(c.From, c.To); err != nil {
			b.log.Error("navigation did not follow the rename", "error", err)
		}
	}
}

// BeginUpload starts an all-or-nothing upload into a folder.
func (l LibraryAdmin) BeginUpload(id string, size int64) (library.Pending, error) {
	u, err := l.b.lib.BeginUpload(id, size)
	if err != nil {
		return nil, err
	}
	return u, nil
}

func (l LibraryAdmin) SetCover(id string, r io.Reader) (library.Dir, error) {
	return l.b.lib.SetCover(id, r)
}
