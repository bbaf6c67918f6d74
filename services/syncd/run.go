package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/syncd/internal/engine"
	"github.com/storybox/storybox/services/syncd/internal/found"
	"github.com/storybox/storybox/services/syncd/internal/members"
	"github.com/storybox/storybox/services/syncd/internal/server"
)

// Config is syncd's configuration.
type Config struct {
	Socket, State, Syncthing, Household, Media, GUI, Name, Cgroup string
	Port                                                          int
	MemoryLimit                                                   int64
	Browse                                                        bool
}

// DefaultConfig is syncd on gokrazy; the limit leaves the player its
// share of a 512 MB board.
var DefaultConfig = Config{
	Socket: "/run/syncd/syncd.sock", State: "/perm/syncd", Syncthing: "/user/syncthing",
	Household: "/perm/playerd/household", Media: "/perm/media", GUI: "127.0.0.1:8384",
	Port: 22000, MemoryLimit: 192 << 20, Browse: true,
}

// Validate checks the configuration without touching the system.
func (c Config) Validate() error {
	if err := daemon.CheckSocket("-socket", c.Socket); err != nil {
		return err
	}
	for flag, p := range map[string]string{"-state": c.State, "-syncthing": c.Syncthing, "-household": c.Household, "-media": c.Media} {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%s %q: want an absolute path", flag, p)
		}
	}
	if c.Cgroup != "" && !strings.HasPrefix(c.Cgroup, "/sys/fs/cgroup/") {
		return fmt.Errorf("-cgroup %q: want a directory under /sys/fs/cgroup/", c.Cgroup)
	}
	host, port, err := net.SplitHostPort(c.GUI)
	if err != nil {
		return fmt.Errorf("-gui %q: want HOST:PORT", c.GUI)
	}
	// The REST API can change what is shared: never beyond this box.
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-gui %q: want a loopback address", c.GUI)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("-gui %q: port: want 1–65535", c.GUI)
	}
	if c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("-port %d: want 1–65535", c.Port)
	}
	if c.MemoryLimit < 32<<20 {
		return fmt.Errorf("-memory-limit %d: want at least 32 MiB", c.MemoryLimit)
	}
	return nil
}

func (c Config) name() string {
	if c.Name != "" {
		return c.Name
	}
	h, _ := os.Hostname()
	if h == "" {
		return "storybox"
	}
	return h
}

func run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if _, err := os.Stat(cfg.Syncthing); err != nil {
		return daemon.Permanent(fmt.Errorf("-syncthing: %w", err))
	}
	for _, d := range []string{cfg.Household, cfg.Media} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	m, err := members.Open(cfg.State)
	if err != nil {
		return err
	}
	eng, err := engine.Open(ctx, engine.Config{
		Program: cfg.Syncthing, State: cfg.State, Household: cfg.Household, Media: cfg.Media,
		GUI: cfg.GUI, Port: cfg.Port, Name: cfg.name(), MemoryLimit: cfg.MemoryLimit, Cgroup: cfg.Cgroup,
		Output: os.Stderr, Log: log,
	}, m)
	if err != nil {
		return err
	}
	if len(m.Boxes()) == 0 {
		log.Info("syncd: this box is alone; Syncthing starts when a second box is added", "device_id", eng.DeviceID())
	}
	feed := engine.NewFeed()
	d := server.Deps{Engine: eng, Members: m, Feed: feed, Household: cfg.Household, Media: cfg.Media}
	sup := daemon.NewGroup(log)
	if cfg.Browse {
		b := &found.Browser{Self: eng.DeviceID()}
		d.Found = b.Boxes
		sup.Restarting(ctx, "mDNS browser", b.Run)
	}
	sup.Restarting(ctx, "syncthing", eng.Run)
	sup.Restarting(ctx, "events", func(ctx context.Context) error { return eng.Follow(ctx, feed) })
	sup.Restarting(ctx, "socket", func(ctx context.Context) error {
		daemon.ServeSocket(ctx, cfg.Socket, server.NewHandler(d, log), log)
		return nil
	})
	<-ctx.Done()
	sup.Wait()
	return nil
}
