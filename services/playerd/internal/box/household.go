package box

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/household"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// openHousehold opens the folder the boxes of a household share (see
// package household) and resolves what Syncthing left in it while playerd
// was not running. Without a box id there is no one to stamp entries as:
// the cards and the catalog then stay in their files of the data
// directory, as on a box before households.
func (b *Box) openHousehold() {
	if b.id == "" {
		return
	}
	h, err := household.Open(b.cfg.Data, b.id, b.clock.Now)
	if err != nil {
		b.log.Error("household folder", "error", err)
		if h == nil {
			return
		}
	}
	rep, err := h.Reconcile()
	if err != nil {
		b.log.Warn("household folder", "error", err)
	}
	if rep.Ahead > 0 {
		b.log.Warn("household: entries stamped ahead of this box's clock; the clock of the box that wrote them, or this one's, is wrong",
			"entries", rep.Ahead, "ahead_by", rep.AheadBy.Round(time.Second))
	}
	b.household = h
}

// HouseholdDir is the folder to share with the other boxes of a household
// as household.FolderID; "" when the box does not keep one (it has no id).
func (b *Box) HouseholdDir() string {
	if b.household == nil {
		return ""
	}
	return household.Dir(b.cfg.Data)
}

// Reconcile is what the box does when Syncthing changed the household's
// folder: conflict files are resolved by the rule and removed, and the
// cards and the catalog read their entries again, each telling the change
// feed when something changed (a card taught on another box then plays
// here). Entries that cannot be used are left out and reported in the
// error; the others are in use all the same.
func (b *Box) Reconcile() (household.Report, error) {
	if b.household == nil {
		return household.Report{}, fault.New(fault.Unavailable, "this box keeps no household folder: it has no box id")
	}
	rep, err := b.household.Reconcile()
	return rep, errors.Join(err, b.cardStore.ReloadShared(), b.radio.ReloadShared())
}

// MediaSynced is what the box does when Syncthing changed the media
// directory: the library is scanned as after an upload (only new and
// changed files are read; a file Syncthing is still receiving has a
// temporary name that is not audio, and appears once it is renamed into
// place, complete). A folder gone from it, deleted on another box, is let
// go as a parent's deletion here lets it go: the player stops if it plays
// it, and its resume point is dropped.
//
// A conflict file Syncthing left in the media is removed first: Syncthing
// keeps the version with the newer modification time under the file's
// name on every box and names the older one a conflict file, so removing
// it keeps the same version everywhere (the newest upload wins), and the
// parent does not find a second copy of a track. A conflict file whose
// original is gone takes its place instead, so nothing is lost.
func (b *Box) MediaSynced(ctx context.Context) error {
	cerr := resolveMediaConflicts(b.cfg.Media)
	before := b.lib.Folders()
	if _, err := b.lib.ScanContext(ctx); err != nil {
		return errors.Join(cerr, err)
	}
	gone := map[string]library.Move{}
	for _, f := range before {
		if _, ok := b.lib.Folder(f.ID); !ok {
			gone[f.ID] = library.Move{}
		}
	}
	if len(gone) == 0 {
		return cerr
	}
	return errors.Join(cerr, b.player.MoveFolders(ctx, gone))
}

// resolveMediaConflicts removes Syncthing's conflict files below root (see
// MediaSynced); hidden directories (Syncthing's own among them) are not
// entered.
func resolveMediaConflicts(root string) error {
	var errs []error
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		orig, ok := household.ConflictOf(name)
		if !ok || !d.Type().IsRegular() || household.Ignored(name) {
			return nil
		}
		origPath := filepath.Join(filepath.Dir(path), orig)
		if _, err := os.Lstat(origPath); errors.Is(err, fs.ErrNotExist) {
			if err := os.Rename(path, origPath); err != nil {
				errs = append(errs, err)
			}
			return nil
		}
		errs = append(errs, state.Remove(path))
		return nil
	})
	if err := errors.Join(append(errs, err)...); err != nil {
		return fmt.Errorf("media conflict files: %w", err)
	}
	return nil
}
