package box

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/backup"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/radio"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/wiring"
)

// Backup writes and restores what a parent configured.
type Backup struct{ b *Box }

// Backup is the parent's backup and restore.
func (b *Box) Backup() Backup { return Backup{b} }

func (Backup) Limits() backup.Limits { return backup.DefaultLimits() }

// Backup streams the archive, with the media when media is set.
func (k Backup) Backup(w io.Writer, media bool) error {
	b := k.b
	m := backup.Manifest{BoxID: b.id, Version: b.cfg.Version, CreatedAt: time.Now().UTC()}
	var fsys fs.FS
	if media {
		root, err := os.OpenRoot(b.cfg.Media)
		if err != nil {
			return fault.Wrap(fault.Unavailable, err, "media directory unavailable")
		}
		defer root.Close()
		fsys = root.FS()
	}
	return backup.Write(w, m, b.backupFiles(), fsys)
}

// Restore checks an archive whole, then replaces and applies it.
func (k Backup) Restore(r io.Reader) (backup.Result, error) {
	b := k.b
	if !b.restore.TryLock() {
		return backup.Result{}, fault.New(fault.Conflict, "a restore is in progress")
	}
	defer b.restore.Unlock()
	res, err := backup.Restore(b.cfg.Data, r, b.backupFiles(), backup.DefaultLimits())
	if err == nil {
		b.log.Warn("backup restored", "from_box", res.Manifest.BoxID, "created_at", res.Manifest.CreatedAt, "files", res.Restored)
	}
	return res, err
}

// backupFiles is everything a parent configured, and nothing secret (the
// administrator password, sessions, tokens and keys have files of their
// own, never listed here): a backup is these files, and a restore replaces
// exactly these. A new kind of parent configuration adds itself here.
func (b *Box) backupFiles() []backup.File {
	return []backup.File{
		{Name: settings.FileName, Check: settings.Check, Apply: b.settings.Reload,
			Read: func() ([]byte, error) { return jsonFile(b.settings.Get()) }},
		{Name: home.FileName, Check: home.Check, Apply: b.nav.reload,
			Read: func() ([]byte, error) {
				if c := b.nav.get(); c != nil {
					return jsonFile(c)
				}
				return nil, nil // derived from the library: nothing configured
			}},
		{Name: state.FileName, Check: state.Check, Apply: b.reloadResume,
			Read: func() ([]byte, error) { return jsonFile(b.saved.Load()) }},
		// Cards a child knows and how the readers and buttons are wired;
		// the list of unknown cards is left out on purpose (it is only a
		// record of what was read).
		{Name: cards.FileName, Check: cards.Check, Apply: b.cardStore.Reload, Read: b.cardStore.Read},
		{Name: wiring.FileName, Check: wiring.Check, Apply: b.wiring.Reload, Read: b.wiring.Read},
		// Stations and podcasts; the feeds' cache and covers are fetched
		// again, so they stay out.
		{Name: radio.FileName, Check: radio.Check, Apply: b.radio.Reload, Read: b.radio.Read},
		{Name: rules.FileName, Check: rules.Check, Apply: b.reloadParental, Read: b.parentalFile},
		{Name: FolderModesFile, Check: CheckFolderModes, Apply: b.modes.reload, Read: b.modes.read},
	}
}

// jsonFile is v as state.WriteJSON writes it.
func jsonFile(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return append(data, '\n'), nil
}

// reloadResume gives the player the resume points of a restored state.
// The queue and the volume stay as they are: a restore does not start or
// change what plays. state.json is the player's file: a save of the old
// state under way while the journal renamed the restored one may land
// after it, but the player saves again with the restored points as soon as
// it has them, so on disk the old points last a write's length.
func (b *Box) reloadResume() error {
	s, err := state.Load(b.cfg.Data)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return b.player.ReplaceResume(ctx, s.Resume)
}
