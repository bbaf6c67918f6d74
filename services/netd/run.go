package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storybox/storybox/services/internal/bootfs"
	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/netd/internal/bootwifi"
	"github.com/storybox/storybox/services/netd/internal/ipconf"
	"github.com/storybox/storybox/services/netd/internal/kmod"
	"github.com/storybox/storybox/services/netd/internal/mdns"
	"github.com/storybox/storybox/services/netd/internal/radio"
	"github.com/storybox/storybox/services/netd/internal/server"
	"github.com/storybox/storybox/services/netd/internal/station"
	"github.com/storybox/storybox/services/netd/internal/store"
)

// Config is netd's configuration.
type Config struct {
	Socket, State, Interface, Country, DHCP, Modules string
	BootMount, BootDir                               string
	Hostname                                         string
	MDNS                                             bool
	HTTPPort                                         int
	JoinTimeout, RetryMax                            time.Duration
}

// DefaultConfig is netd on gokrazy.
var DefaultConfig = Config{
	Socket: "/run/netd/netd.sock", State: "/perm/netd", DHCP: "/gokrazy/dhcp",
	MDNS: true, HTTPPort: 8090, JoinTimeout: station.DefaultJoinTimeout, RetryMax: station.DefaultRetryMax,
}

// Validate checks the configuration without touching the system.
func (c Config) Validate() error {
	if err := daemon.CheckSocket("-socket", c.Socket); err != nil {
		return err
	}
	for flag, p := range map[string]string{"-state": c.State, "-dhcp": c.DHCP} {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%s %q: want an absolute path", flag, p)
		}
	}
	for flag, p := range map[string]string{"-mount-boot": c.BootMount, "-boot-dir": c.BootDir} {
		if p != "" && !filepath.IsAbs(p) {
			return fmt.Errorf("%s %q: want an absolute path", flag, p)
		}
	}
	if c.BootMount != "" && c.BootDir != "" {
		return errors.New("-mount-boot and -boot-dir exclude each other")
	}
	if err := store.CheckCountry(c.Country); err != nil {
		return fmt.Errorf("-country %q: %w", c.Country, err)
	}
	if c.HTTPPort < 1 || c.HTTPPort > 65535 {
		return fmt.Errorf("-http-port %d: want 1–65535", c.HTTPPort)
	}
	if c.JoinTimeout < time.Second || c.JoinTimeout > 5*time.Minute {
		return fmt.Errorf("-join-timeout %s: want 1s–5m", c.JoinTimeout)
	}
	if c.RetryMax < time.Second || c.RetryMax > time.Hour {
		return fmt.Errorf("-retry-max %s: want 1s–1h", c.RetryMax)
	}
	if strings.ContainsAny(c.Interface, "/ ") {
		return fmt.Errorf("-interface %q: not an interface name", c.Interface)
	}
	for _, m := range modules(c.Modules) {
		if strings.ContainsAny(strings.TrimSuffix(m, "?"), "/ .?") {
			return fmt.Errorf("-modules: %q is not a module name", m)
		}
	}
	if c.MDNS {
		a := mdns.Advertiser{Host: c.hostname(), Services: c.services()}
		if err := a.Validate(); err != nil {
			return fmt.Errorf("-hostname: %w", err)
		}
	}
	return nil
}

func modules(list string) []string {
	var out []string
	for _, m := range strings.Split(list, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

func (c Config) hostname() string {
	if c.Hostname != "" {
		return c.Hostname
	}
	h, _ := os.Hostname()
	return h
}

// services are what the box offers on the home network.
func (c Config) services() []mdns.Service {
	return []mdns.Service{{Name: c.hostname(), Type: "_http._tcp", Port: c.HTTPPort, Text: map[string]string{"path": "/", "api": "/api/"}}}
}

func run(ctx context.Context, cfg Config, log *slog.Logger) error {
	loadModules(cfg, log)
	st, err := store.Open(cfg.State)
	if err != nil {
		log.Warn("known networks", "err", err)
	}
	pickupBoot(cfg, st, log)

	var r radio.Radio
	if nl, err := radio.OpenNL80211(); err != nil {
		log.Warn("no Wi-Fi support in this kernel; serving without an adapter", "err", err)
		r = radio.None{}
	} else {
		defer nl.Close()
		r = nl
	}
	dhcp := &ipconf.DHCP{Program: cfg.DHCP, Output: os.Stderr, Log: log}
	defer dhcp.Close()
	serve(ctx, cfg, station.Config{Radio: r, Store: st, Addr: dhcp}, log)
	return nil
}

// serve runs netd's parts until ctx ends: the station (the Wi-Fi link and
// its addresses), the mDNS responder and the socket. Each is supervised
// (daemon.Group): one that fails or panics is logged and started again
// after 1, 2, 4 … s, at most a minute apart, while the others go on; a
// restart of netd would drop the link with it. None is essential: what no
// restart fixes is refused before they start (exit 125). sta carries the
// radio, store and addressing; serve adds the rest from cfg.
func serve(ctx context.Context, cfg Config, sta station.Config, log *slog.Logger) {
	sta.Log, sta.Interface, sta.Country = log, cfg.Interface, cfg.Country
	sta.JoinTimeout, sta.RetryMax = cfg.JoinTimeout, cfg.RetryMax
	wifi := station.New(sta)

	sup := daemon.NewGroup(log)
	sup.Restarting(ctx, "station", func(ctx context.Context) error {
		wifi.Run(ctx)
		return nil
	})
	var ann server.Announcer
	if cfg.MDNS {
		adv := &mdns.Advertiser{Host: cfg.hostname(), Services: cfg.services(), Log: log}
		ann = adv
		sup.Restarting(ctx, "mDNS responder", adv.Run)
	}
	sup.Restarting(ctx, "socket", func(ctx context.Context) error {
		daemon.ServeSocket(ctx, cfg.Socket, server.NewHandler(wifi, ann, log), log)
		return nil
	})
	<-ctx.Done()
	sup.Wait()
}

func loadModules(cfg Config, log *slog.Logger) {
	names := modules(cfg.Modules)
	if len(names) == 0 {
		return
	}
	l, err := kmod.Default()
	if err != nil {
		log.Error("kernel modules", "err", err)
		return
	}
	for _, m := range names {
		name, optional := strings.CutSuffix(m, "?")
		if err := l.Load(name); err != nil && !(optional && errors.Is(err, kmod.ErrUnknown)) {
			log.Error("kernel module", "module", name, "err", err)
		}
	}
}

// pickupBoot imports a wifi.json from the boot partition.
func pickupBoot(cfg Config, st *store.Store, log *slog.Logger) {
	dir, remove := cfg.BootDir, os.Remove
	if cfg.BootMount != "" {
		if _, err := bootfs.Mount(cfg.BootMount); err != nil {
			log.Warn("boot partition", "err", err)
			return
		}
		dir, remove = cfg.BootMount, removeFromReadOnly(cfg.BootMount)
	}
	if dir == "" {
		return
	}
	res, err := bootwifi.Pickup(dir, cfg.State, st, remove)
	if res.Imported > 0 {
		log.Info("networks taken over from the boot partition's wifi.json", "networks", res.Imported, "removed", res.Removed)
	}
	if err != nil {
		log.Warn("wifi.json on the boot partition", "err", err)
	}
}

// removeFromReadOnly makes the read-only boot mount writable for the
// removal only: gokrazy writes that partition raw during an update, which
// a long-lived writable mount could race.
func removeFromReadOnly(mount string) func(string) error {
	return func(path string) error {
		const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
		if err := unix.Mount("", mount, "", unix.MS_REMOUNT|flags, ""); err != nil {
			return fmt.Errorf("remount writable: %w", err)
		}
		err := os.Remove(path)
		if rerr := unix.Mount("", mount, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); rerr != nil && err == nil {
			err = fmt.Errorf("remount read-only: %w", rerr)
		}
		return err
	}
}
