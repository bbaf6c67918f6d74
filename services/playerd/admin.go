package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/backup"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/radio"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/sysinfo"
)

// The admin area wired to the running box: the configuration a parent sets
// (settings, navigation), library management, the machine and its power,
// backup and restore. The logic is in the capability packages; this file
// connects them and applies changes to the parts that act on them.

// adminState is what the admin area keeps beside the box's parts.
type adminState struct {
	ready      sysinfo.Ready
	systemHost string            // the host name of the flags or the system
	powerReq   chan power.Action // taken by run, which then shuts down
	restoreMu  sync.Mutex        // one restore at a time
}

// loadConfig completes a restore a crash interrupted, then reads the
// settings and the navigation. Broken files are logged and the defaults
// used: the box always starts.
func (a *app) loadConfig() {
	a.adm.powerReq = make(chan power.Action, 1)
	if done, err := backup.Recover(a.cfg.Data); err != nil {
		a.log.Error("restore journal", "error", err)
	} else if done {
		a.log.Warn("completed a restore that was interrupted")
	}
	var err error
	if a.settings, err = settings.Open(a.cfg.Data); err != nil {
		a.log.Warn("settings", "error", err)
	}
	if err := a.reloadNavigation(); err != nil {
		a.log.Warn("home screen", "error", err)
	}
}

// startAdmin makes the parts follow the settings, from now on and once
// now.
func (a *app) startAdmin() {
	if a.cfg.Uploads != (library.Limits{}) {
		a.lib.SetLimits(a.cfg.Uploads)
	}
	a.adm.systemHost = a.cfg.Hostname
	if a.adm.systemHost == "" {
		a.adm.systemHost, _ = os.Hostname() // newAuth logged a failure
	}
	a.settings.OnChange(a.applySettings)
	s := a.settings.Get()
	a.display.Apply(displaySettings(s))
	a.applyHosts(s)
}

// applyHosts gives the Host check the names of the settings beside those of
// the configuration. The system's own name stays allowed: the box is still
// reached by it until the network announces the new one.
func (a *app) applyHosts(s settings.Settings) {
	extra := slices.Clone(a.cfg.AllowHosts)
	if s.HostName != "" {
		extra = append(extra, s.HostName, s.HostName+".local")
	}
	a.hosts.Set(a.adm.systemHost, append(extra, s.AllowedHosts...))
}

func displaySettings(s settings.Settings) display.Settings {
	return display.Settings{Lang: s.Language, IdleOff: time.Duration(s.Display.IdleOffMinutes) * time.Minute, Brightness: s.Display.Brightness}
}

// applySettings runs after every change of the settings. Speech reads its
// voice from the store at each announcement.
func (a *app) applySettings(old, s settings.Settings) {
	if old.Audio != s.Audio {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		au := s.Audio
		if _, err := a.player.SetVolumes(ctx, player.Volumes{Max: au.MaxVolume, Start: au.StartupVolume, Announce: au.AnnouncementVolume}); err != nil {
			a.log.Error("apply volume limits", "error", err)
		}
	}
	a.display.Apply(displaySettings(s))
	a.applyHosts(s)
	a.publishSettings(old, s)
	a.log.Info("settings changed")
}

// navigation is the home screen's navigation: the parent's, or the one
// derived from the library.
func (a *app) navigation() *home.Config {
	if c := a.homeCfg.Load(); c != nil {
		return c
	}
	return home.WithStreams(home.Defaults(a.lib.TopLevel()))
}

// reloadNavigation reads home.json again (at start, after a restore).
func (a *app) reloadNavigation() error {
	c, err := home.LoadConfig(a.cfg.Data)
	a.homeCfg.Store(c)
	if a.display != nil {
		a.display.ContentChanged()
	}
	return err
}

// restoredNavigation is reloadNavigation after a restore, which clients
// hear of.
func (a *app) restoredNavigation() error {
	err := a.reloadNavigation()
	a.publish(events.KindSettings, settingsEvent{[]string{"navigation"}})
	return err
}

type navigationAdmin struct{ a *app }

func (n navigationAdmin) Navigation() *home.Config { return n.a.navigation() }

func (n navigationAdmin) PutNavigation(c *home.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := c.CheckFolders(n.a.lib.HasDir); err != nil {
		return err
	}
	if err := home.Save(n.a.cfg.Data, c); err != nil {
		return err
	}
	n.a.homeCfg.Store(c.Clone())
	n.a.display.ContentChanged()
	n.a.publish(events.KindSettings, settingsEvent{[]string{"navigation"}})
	return nil
}

// libraryAdmin changes the media directory and carries what refers to a
// folder's path along: resume points, navigation rows, the screen.
type libraryAdmin struct{ a *app }

func (l libraryAdmin) Dirs() ([]library.Dir, error) { return l.a.lib.Dirs() }

func (l libraryAdmin) Limits() library.Limits { return l.a.lib.Limits() }

func (l libraryAdmin) CreateFolder(parent, name string) (library.Dir, error) {
	d, err := l.a.lib.CreateFolder(parent, name)
	l.a.display.ContentChanged()
	return d, err
}

func (l libraryAdmin) RenameFolder(id, name string) (library.Dir, error) {
	d, c, err := l.a.lib.RenameFolder(id, name)
	l.follow(c)
	return d, err
}

func (l libraryAdmin) DeleteFolder(id string) error {
	c, err := l.a.lib.DeleteFolder(id)
	l.follow(c)
	return err
}

// follow updates what refers to folders after a rename or delete. The
// change on disk has happened; a failure here is logged, not undone.
func (l libraryAdmin) follow(c library.Change) {
	a := l.a
	if len(c.Moves) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.player.MoveFolders(ctx, c.Moves); err != nil {
			a.log.Error("resume points did not follow the folders", "error", err)
		}
	}
	if nav := a.homeCfg.Load(); nav != nil && c.To != "" {
		if n := nav.Clone(); n.Renamed(c.From, c.To) {
			if err := home.Save(a.cfg.Data, n); err != nil {
				a.log.Error("navigation did not follow the rename", "error", err)
			} else {
				a.homeCfg.Store(n)
			}
		}
	}
	a.display.ContentChanged()
}

func (l libraryAdmin) BeginUpload(id string, size int64) (api.Upload, error) {
	u, err := l.a.lib.BeginUpload(id, size)
	if err != nil {
		return nil, err
	}
	return upload{u, l.a}, nil
}

type upload struct {
	*library.Upload
	a *app
}

func (u upload) Commit() ([]library.File, error) {
	files, err := u.Upload.Commit()
	u.a.display.ContentChanged()
	return files, err
}

func (l libraryAdmin) SetCover(id string, r io.Reader) (library.Dir, error) {
	d, err := l.a.lib.SetCover(id, r)
	l.a.display.ContentChanged()
	return d, err
}

// systemAdmin is the machine and its power.
type systemAdmin struct{ a *app }

func (s systemAdmin) Info() sysinfo.Info {
	c := sysinfo.Config{Proc: "/proc", Sys: "/sys", DataDir: s.a.cfg.Data, Version: s.a.cfg.Version}
	return sysinfo.Read(c, s.a.adm.ready, time.Now())
}

// Power hands the action to run, which pauses, stops every part, saves
// the state and then switches (switchPower). On a development machine
// nothing is switched, and playerd keeps running.
func (s systemAdmin) Power(act power.Action) (bool, error) {
	a := s.a
	if a.powerFunc(act) == nil {
		a.log.Warn("not on gokrazy: the box would "+string(act)+" now", "action", act)
		return true, nil
	}
	select {
	case a.adm.powerReq <- act:
		a.log.Warn("power requested", "action", act)
		return false, nil
	default:
		return false, fault.New(fault.Conflict, "a power action is already scheduled")
	}
}

// powerFunc is the switch for act: the one the configuration injects (tests),
// the system's on gokrazy, nil on a development machine.
func (a *app) powerFunc(act power.Action) power.Func {
	injected, system := a.cfg.PowerOff, power.System
	if act == power.Reboot {
		injected, system = a.cfg.Reboot, power.SystemReboot
	}
	switch {
	case injected != nil:
		return injected
	case power.OnGokrazy():
		return system(true)
	}
	return nil
}

// switchPower runs after the state is on disk. A failure is returned so
// playerd exits non-zero and gokrazy restarts it.
func (a *app) switchPower(act power.Action) error {
	f := a.powerFunc(act)
	if f == nil {
		f = power.System(false) // a development machine: ErrDryRun
	}
	err := f(context.Background())
	if errors.Is(err, power.ErrDryRun) {
		a.log.Warn("not on gokrazy: the box would " + string(act) + " now")
		return nil
	}
	return err
}

// backupAdmin writes and restores the configuration.
type backupAdmin struct{ a *app }

func (b backupAdmin) Limits() backup.Limits { return backup.DefaultLimits() }

func (b backupAdmin) Backup(w io.Writer, media bool) error {
	a := b.a
	m := backup.Manifest{BoxID: a.boxID, Version: a.cfg.Version, CreatedAt: time.Now().UTC()}
	var fsys fs.FS
	if media {
		root, err := os.OpenRoot(a.cfg.Media)
		if err != nil {
			return fault.Wrap(fault.Unavailable, err, "media directory unavailable")
		}
		defer root.Close()
		fsys = root.FS()
	}
	return backup.Write(w, m, a.backupFiles(), fsys)
}

func (b backupAdmin) Restore(r io.Reader) (backup.Result, error) {
	a := b.a
	if !a.adm.restoreMu.TryLock() {
		return backup.Result{}, fault.New(fault.Conflict, "a restore is in progress")
	}
	defer a.adm.restoreMu.Unlock()
	res, err := backup.Restore(a.cfg.Data, r, a.backupFiles(), backup.DefaultLimits())
	if err == nil {
		a.log.Warn("backup restored", "from_box", res.Manifest.BoxID, "created_at", res.Manifest.CreatedAt, "files", res.Restored)
	}
	return res, err
}

// backupFiles is everything a parent configured, and nothing secret (the
// administrator password, sessions, tokens and keys have files of their
// own, never listed here): a backup is these files, and a restore replaces
// exactly these. A new kind of parent configuration adds itself here.
func (a *app) backupFiles() []backup.File {
	return []backup.File{
		{Name: settings.FileName, Check: settings.Check, Apply: a.settings.Reload,
			Read: func() ([]byte, error) { return jsonFile(a.settings.Get()) }},
		{Name: home.FileName, Check: home.Check, Apply: a.restoredNavigation,
			Read: func() ([]byte, error) {
				if c := a.homeCfg.Load(); c != nil {
					return jsonFile(c)
				}
				return nil, nil // derived from the library: nothing configured
			}},
		{Name: state.FileName, Check: state.Check, Apply: a.reloadResume,
			Read: func() ([]byte, error) { return jsonFile(a.saved.Load()) }},
		// Cards a child knows and how the readers and buttons are wired;
		// the list of unknown cards is left out on purpose (it is only a
		// record of what was read).
		{Name: cards.FileName, Check: cards.Check, Apply: a.cardStore.Reload, Read: a.cardStore.Read},
		{Name: input.WiringFileName, Check: input.CheckWiring, Apply: a.input.Reload, Read: a.wiring.Read},
		// Stations and podcasts; the feeds' cache and covers are fetched
		// again, so they stay out.
		{Name: radio.FileName, Check: radio.Check, Apply: a.radio.Reload, Read: a.radio.Read},
		{Name: rules.FileName, Check: rules.Check, Apply: a.reloadParental, Read: a.parentalFile},
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
func (a *app) reloadResume() error {
	s, err := state.Load(a.cfg.Data)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return a.player.ReplaceResume(ctx, s.Resume)
}

// adminDeps are the API's admin parts.
func (a *app) adminDeps(d *api.Deps) {
	d.Resume = func() map[string]state.ResumePoint { return a.saved.Load().Resume }
	d.Settings = a.settings
	d.Navigation = navigationAdmin{a}
	d.LibraryAdmin = libraryAdmin{a}
	d.SystemAdmin = systemAdmin{a}
	d.Backup = backupAdmin{a}
}
