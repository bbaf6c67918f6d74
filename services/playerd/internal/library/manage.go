package library

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Management of the media directory for the admin API: folders, uploads
// (upload.go) and covers. Every change goes through an os.Root of the media
// directory, so no name, "..", absolute path or symbolic link can reach a
// file outside it; symbolic links are never managed (nor listed) at all.
// Changes run one at a time, and the view is scanned again after each, so
// the library never needs a restart.

// Dir is a directory of the media library, with or without audio.
type Dir struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Relative string  `json:"relative"` // "" for the media root
	Parent   *string `json:"parent"`   // the parent's id; null for the media root
	Tracks   int     `json:"tracks"`   // playable tracks directly in it, at the last scan
	Cover    *string `json:"cover"`    // "/api/cover/<id>", null when there is none
}

// Change is what a rename or delete did: the folder's path before and after
// ("" after a delete), and the moves of every folder with an id that
// changed.
type Change struct {
	From, To string
	Moves    map[string]Move
}

// Move tells where a folder went when a rename or delete changed its id:
// NewID is "" for a deleted folder; Tracks maps old track ids to new ones.
type Move struct {
	NewID  string
	Tracks map[string]string
}

// maxDirs bounds a walk of the media directory.
const maxDirs = 20000

var (
	errBusy     = fault.Retry(fault.Busy, 2*time.Second, "another change of the library is in progress")
	errRootLeft = fault.New(fault.Conflict, "the media root itself cannot be renamed or deleted")
)

// manageWait is how long a change waits for the one before it.
const manageWait = 2 * time.Second

// change runs f with the media root open, after any other change.
func (l *Library) change(f func(root *os.Root) error) error {
	t := time.NewTimer(manageWait)
	defer t.Stop()
	select {
	case l.manage <- struct{}{}:
	case <-t.C:
		return errBusy
	}
	defer func() { <-l.manage }()
	root, err := os.OpenRoot(l.root)
	if err != nil {
		return fault.Wrap(fault.Unavailable, err, "media directory unavailable")
	}
	defer root.Close()
	return f(root)
}

// Dirs lists every directory below the media root (the root first, then
// natural order of the paths). Hidden directories and links are left out.
// It reads only, so it does not wait for changes.
func (l *Library) Dirs() ([]Dir, error) {
	root, err := os.OpenRoot(l.root)
	if err != nil {
		return nil, fault.Wrap(fault.Unavailable, err, "media directory unavailable")
	}
	defer root.Close()
	rels, err := walkDirs(root)
	if err != nil {
		return nil, err
	}
	dirs := make([]Dir, 0, len(rels))
	for _, rel := range rels {
		dirs = append(dirs, l.dir(rel))
	}
	return dirs, nil
}

func walkDirs(root *os.Root) ([]string, error) {
	var rels []string
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // an unreadable directory is left out
		}
		if !d.IsDir() { // files, and links of any kind
			return nil
		}
		if p == "." {
			p = ""
		} else if hidden(d.Name()) {
			return fs.SkipDir
		}
		if len(rels) >= maxDirs {
			return fmt.Errorf("more than %d directories", maxDirs)
		}
		rels = append(rels, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("library: %w", err)
	}
	slices.SortFunc(rels[min(1, len(rels)):], func(a, b string) int {
		if naturalLess(a, b) {
			return -1
		}
		return 1
	})
	return rels, nil
}

// dir describes the directory rel as the last scan saw it.
func (l *Library) dir(rel string) Dir {
	d := Dir{ID: ID(rel), Name: path.Base(rel), Relative: rel}
	if rel == "" {
		d.Name = "Media"
	} else {
		parent := ID(parentOf(rel))
		d.Parent = &parent
	}
	if f, ok := l.Folder(d.ID); ok {
		d.Tracks, d.Cover = len(f.Tracks), f.Cover
	}
	return d
}

func parentOf(rel string) string {
	if p := path.Dir(rel); p != "." {
		return p
	}
	return ""
}

// resolve finds the directory with id; "" is the media root.
func resolve(root *os.Root, id string) (string, error) {
	if id == "" || id == ID("") {
		return "", nil
	}
	if len(id) == 32 && strings.Trim(id, "0123456789abcdef") == "" {
		rels, err := walkDirs(root)
		if err != nil {
			return "", err
		}
		for _, rel := range rels {
			if ID(rel) == id {
				return rel, nil
			}
		}
	}
	return "", fault.New(fault.NotFound, "no folder with id %q", id)
}

// CreateFolder makes a folder name in the folder parentID ("" for the media
// root).
func (l *Library) CreateFolder(parentID, name string) (Dir, error) {
	name, err := FolderName(name)
	if err != nil {
		return Dir{}, err
	}
	var rel string
	err = l.change(func(root *os.Root) error {
		parent, err := resolve(root, parentID)
		if err != nil {
			return err
		}
		rel = path.Join(parent, name)
		if len(rel) > maxRelative {
			return fault.New(fault.Invalid, "the folder path would be longer than %d bytes", maxRelative)
		}
		if err := root.Mkdir(rel, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fault.New(fault.Conflict, "%q already exists", rel)
			}
			return fmt.Errorf("library: create folder: %w", err)
		}
		return syncDir(root, parent)
	})
	if err != nil {
		return Dir{}, err
	}
	return l.rescan(rel)
}

// RenameFolder gives the folder id a new name in the same parent. Its id,
// and the ids of the folders and tracks below it, change with the path.
func (l *Library) RenameFolder(id, name string) (Dir, Change, error) {
	name, err := FolderName(name)
	if err != nil {
		return Dir{}, Change{}, err
	}
	var rel string
	var c Change
	err = l.change(func(root *os.Root) error {
		old, err := resolve(root, id)
		if err != nil {
			return err
		}
		if old == "" {
			return errRootLeft
		}
		rel = path.Join(parentOf(old), name)
		if rel == old {
			return nil
		}
		if len(rel) > maxRelative {
			return fault.New(fault.Invalid, "the folder path would be longer than %d bytes", maxRelative)
		}
		if _, err := root.Lstat(rel); err == nil {
			return fault.New(fault.Conflict, "%q already exists", rel)
		}
		c = Change{From: old, To: rel, Moves: l.movesUnder(old, rel)}
		if err := root.Rename(old, rel); err != nil {
			return fmt.Errorf("library: rename folder: %w", err)
		}
		l.renameCache(old, rel)
		return syncDir(root, parentOf(rel))
	})
	if err != nil {
		return Dir{}, Change{}, err
	}
	d, err := l.rescan(rel)
	return d, c, err
}

// DeleteFolder removes the folder id with everything in it.
func (l *Library) DeleteFolder(id string) (Change, error) {
	var c Change
	err := l.change(func(root *os.Root) error {
		rel, err := resolve(root, id)
		if err != nil {
			return err
		}
		if rel == "" {
			return errRootLeft
		}
		c = Change{From: rel, Moves: l.movesUnder(rel, "")}
		if err := root.RemoveAll(rel); err != nil {
			return fmt.Errorf("library: delete folder: %w", err)
		}
		return syncDir(root, parentOf(rel))
	})
	if err != nil {
		return Change{}, err
	}
	_, err = l.rescan("")
	return c, err
}

// HasDir reports whether rel (slash-separated, below the media root) is a
// directory the management sees: no hidden element, no link leaving the
// root.
func (l *Library) HasDir(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if part == "" || hidden(part) {
			return false
		}
	}
	root, err := os.OpenRoot(l.root)
	if err != nil {
		return false
	}
	defer root.Close()
	fi, err := root.Stat(rel)
	return err == nil && fi.IsDir()
}

// movesUnder maps the scanned folders at or below old to their place below
// new ("" when they are deleted).
func (l *Library) movesUnder(old, new string) map[string]Move {
	moves := map[string]Move{}
	for _, f := range l.Folders() {
		rest, ok := strings.CutPrefix(f.Relative, old)
		if !ok || rest != "" && !strings.HasPrefix(rest, "/") {
			continue
		}
		m := Move{}
		if new != "" {
			m.NewID = ID(new + rest)
			m.Tracks = map[string]string{}
			for _, t := range f.Tracks {
				m.Tracks[t.ID] = ID(new + strings.TrimPrefix(t.rel, old))
			}
		}
		moves[f.ID] = m
	}
	return moves
}

// renameCache moves the scan cache's entries with a renamed folder, so the
// scan after a rename reads none of its files again.
func (l *Library) renameCache(old, new string) {
	if l.cachePath == "" {
		return
	}
	l.scanMu.Lock()
	defer l.scanMu.Unlock()
	c := loadCache(l.cachePath)
	for rel, fi := range c.Files {
		if rest, ok := strings.CutPrefix(rel, old+"/"); ok {
			delete(c.Files, rel)
			c.Files[new+"/"+rest] = fi
		}
	}
	_ = c.save(l.cachePath) // only an optimisation: a failure costs a slower scan
}

// rescan brings the view up to date after a change and describes rel. It
// follows every change of the media directory, and tells of it (edited)
// also when the scan fails: the directory did change.
func (l *Library) rescan(rel string) (Dir, error) {
	defer l.edited()
	if _, err := l.Scan(); err != nil {
		return Dir{}, err
	}
	return l.dir(rel), nil
}

func syncDir(root *os.Root, rel string) error {
	if rel == "" {
		rel = "."
	}
	d, err := root.Open(rel)
	if err != nil {
		return fmt.Errorf("library: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("library: sync: %w", err)
	}
	return nil
}
