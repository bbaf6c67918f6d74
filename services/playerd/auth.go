package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/bootfs"
	"github.com/storybox/storybox/services/playerd/internal/auth"
)

// resetPoll is how often the reset file is looked for after the start. On
// the box it can only appear while the box is off (the SD card is inside),
// so this is for development setups; a stat every few seconds costs nothing.
const resetPoll = 2 * time.Second

// newAuth opens the administrator password and the names the API answers
// to, and acts on a reset file placed while the box was off, before the API
// serves anything.
func (a *app) newAuth() error {
	m, err := auth.New(auth.Config{Dir: a.cfg.Data, Params: a.cfg.PasswordParams, Now: a.cfg.AuthClock})
	if m == nil {
		return err
	}
	if err != nil {
		a.log.Error("administrator password", "error", err) // m stays protected: fail closed
	}
	a.auth = m
	host := a.cfg.Hostname
	if host == "" {
		if host, err = os.Hostname(); err != nil {
			a.log.Warn("no host name: the API answers to IP addresses and localhost only", "error", err)
		}
	}
	a.hostname = host
	a.hosts = auth.NewHosts(host, a.cfg.AllowHosts)
	if a.cfg.MountBoot != "" {
		if dev, err := bootfs.Mount(a.cfg.MountBoot); err != nil {
			a.log.Warn("boot partition not readable: no password reset from the SD card", "error", err)
		} else {
			a.log.Info("boot partition mounted read-only", "device", dev, "dir", a.cfg.MountBoot)
		}
	}
	if a.cfg.AdminResetFile != "" {
		a.reportReset(a.auth.CheckReset(a.cfg.AdminResetFile))
	}
	return nil
}

// startResetWatch keeps looking for the reset file until ctx ends.
func (a *app) startResetWatch(ctx context.Context, wg *sync.WaitGroup) {
	if a.cfg.AdminResetFile == "" {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.auth.WatchReset(ctx, a.cfg.AdminResetFile, resetPoll, a.reportReset)
	}()
}

func (a *app) reportReset(reset bool, err error) {
	if reset {
		a.log.Warn("administrator password removed: the reset file was found", "file", a.cfg.AdminResetFile)
	}
	if err != nil {
		a.log.Error("password reset", "error", err)
	}
}

// checkAdminConfig checks the administration part of the configuration.
// The reset file must not be anywhere the API can write (the media library
// takes uploads, the data directory restores backups): network access
// alone must never reset the password.
func checkAdminConfig(c Config) error {
	for _, n := range c.AllowHosts {
		if err := auth.CheckHostName(n); err != nil {
			return fmt.Errorf("-allow-host: %w", err)
		}
	}
	if c.AdminResetFile == "" {
		return nil
	}
	for _, dir := range []string{c.Media, c.Data} {
		if inside(c.AdminResetFile, dir) {
			return fmt.Errorf("-admin-reset-file %s is inside %s, which the API writes to", c.AdminResetFile, dir)
		}
	}
	return nil
}

func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return true
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
