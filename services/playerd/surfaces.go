package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/storybox/storybox/services/internal/bootfs"
	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/haserve"
	"github.com/storybox/storybox/services/playerd/internal/hat"
	"github.com/storybox/storybox/services/playerd/internal/hav1"
	"github.com/storybox/storybox/services/playerd/internal/hhlink"
	"github.com/storybox/storybox/services/playerd/internal/httpserve"
	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/metrics"
	"github.com/storybox/storybox/services/playerd/internal/mpris"
	"github.com/storybox/storybox/services/playerd/internal/netclient"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/sysinfo"
	"github.com/storybox/storybox/services/playerd/internal/system"
)

// surfaces are what people and programs use the core through: the local
// API, the home-automation API, the touch screen, card readers and
// buttons, the battery board's service, MPRIS. Each is built from the
// core's parts and takes only what it needs of them; newSurfaces shows
// them all.
type surfaces struct {
	cfg     Config
	core    *box.Box
	log     *slog.Logger
	auth    *auth.Manager
	api     *http.Server
	ha      *haserve.Service // nil: off
	display *display.Display
	screen  func(context.Context) error // runs the display; restarts it when asked
	input   *input.Manager
	hatd    *hat.Client       // nil without -hat
	netd    *netclient.Client // nil without -net
	// household is the household of boxes; nil without -sync.
	household *hhlink.Link
}

func newSurfaces(cfg Config, h hooks, core *box.Box, clk clock.Clock, ready sysinfo.Ready, log *slog.Logger) (*surfaces, error) {
	s := &surfaces{cfg: cfg, core: core, log: log}
	m, hosts, host, err := openAuth(cfg, h, clk, log)
	if err != nil {
		return nil, err
	}
	s.auth = m
	kernel := system.NewKernel("/proc")
	if cfg.Hat != "" {
		s.hatd = hat.NewClient(cfg.Hat, time.Second)
	}
	sys := system.Reader{Net: kernel, Battery: s.hatd.Battery}
	var conn api.Connectivity
	if cfg.Net != "" {
		s.netd = netclient.New(cfg.Net)
		conn, sys.Net = s.netd, system.Netd{Daemon: s.netd, Fallback: kernel}
	}
	machine := metrics.New("/proc", "/sys", cfg.Media)
	s.household = openHousehold(cfg, core, host, log)
	var household api.HouseholdAdmin // a nil *hhlink.Link is not a nil HouseholdAdmin
	var txt func(context.Context, map[string]string) map[string]string
	if s.household != nil {
		household, txt = s.household, s.household.TXT(cfg.Listen)
	}
	if cfg.HAListen != "" || h.haListener != nil {
		s.ha = haserve.Open(haserve.Config{Listen: cfg.HAListen, Listener: h.haListener, Data: cfg.Data,
			Host: host, ID: core.ID(), Names: cfg.AllowHosts, Clock: clk, Addresses: h.certAddrs, CertCheck: h.certCheck,
			Core: core.HomeAutomation(), TXT: txt}, log)
	}
	if s.display, err = openDisplay(cfg, h, core, conn, log); err != nil {
		return nil, err
	}
	restarts := display.NewRestarts()
	s.screen = runScreen(s.display, screenReopener(cfg, h, log), restarts, log)
	in, err := openInput(cfg, h, core, log)
	if err != nil {
		return nil, err
	}
	s.input = in
	s.api = httpserve.New(api.NewHandler(api.Deps{
		Version:   cfg.Version,
		Log:       log,
		Player:    core.Player(),
		Library:   core.LibraryView(),
		Radio:     core.Radio(),
		UIRestart: restarts,
		Views: api.Views{
			Home:         core.Home,
			Info:         core.Info,
			Metrics:      machine.Read,
			System:       sys.Read,
			Restrictions: core.Rules().Restrictions,
			Scan:         core.Library().Progress,
			Resume:       core.Resume,
			Loudness:     core.Loudness().Progress,
		},
		Hat:          s.hatd,
		Display:      core.Screen(),
		Speaker:      core.Speech(),
		Net:          conn,
		Auth:         m,
		Hosts:        hosts,
		HA:           core.HomeAutomation(),
		Refused:      map[string]http.Handler{hav1.Prefix + "/": hav1.NotHere()},
		Cards:        core.Cards(),
		Input:        core.Wiring(),
		Events:       core.Changes(),
		Parental:     core.Parental(),
		Settings:     core.Settings(),
		Navigation:   core,
		LibraryAdmin: core.LibraryAdmin(),
		FolderModes:  core,
		SystemAdmin:  core.System(ready),
		Backup:       core.Backup(),
		Household:    household,
	}))
	if s.ha != nil {
		s.ha.Handle(hav1.Deps{
			Log:     log,
			Version: cfg.Version,
			Name:    host,
			Player:  core.Player(),
			Covers:  core.Catalog(),
			Device:  func() hav1.Device { return hav1.DeviceOf(sys.Read(), machine.Read().UptimeSeconds) },
			Metrics: machine.Read,
			Output:  hav1.OutputOf(cfg.Output),
			Speaker: core.Speech(),
			Display: core.Screen(),
			Power:   core.Power().AskFor("home automation"),
			Events:  hav1.BusFeed{Bus: core.Changes(), Player: core.Player()},
			Auth:    m,
			Hosts:   hosts,
		})
	}
	// The surfaces follow the parent's settings from now on, and once now.
	follow := func(_, st settings.Settings) {
		s.display.Apply(display.SettingsOf(st))
		hosts.Set(host, append(slices.Clone(cfg.AllowHosts), st.HostNames()...))
	}
	core.Settings().OnChange(follow)
	follow(settings.Settings{}, core.Settings().Get())
	return s, nil
}

// start runs the surfaces under sup until ctx ends; ln is the API's
// listener, nil when the first listen failed.
func (s *surfaces) start(ctx context.Context, sup *daemon.Group, ln net.Listener) {
	cfg := s.cfg
	sup.Restarting(ctx, "display", s.screen)
	sup.Restarting(ctx, "input", s.input.Run)
	sup.Restarting(ctx, "API", func(ctx context.Context) error {
		httpserve.Serve(ctx, s.api, ln, cfg.Listen, httpserve.Limit, s.log)
		return nil
	})
	if s.hatd != nil {
		sup.Restarting(ctx, "battery monitor", watchBattery(s.hatd, s.core, s.log))
	}
	if cfg.AdminResetFile != "" {
		sup.Restarting(ctx, "password reset watch", func(ctx context.Context) error {
			s.auth.WatchReset(ctx, cfg.AdminResetFile, resetPoll, resetReporter(cfg.AdminResetFile, s.log))
			return nil
		})
	}
	if cfg.MPRIS == "session" {
		mc := mpris.Config{
			Player:  s.core.Player(), // the same path as the APIs' commands
			Events:  s.core.Changes(),
			OnReady: func(name string) { s.log.Info("MPRIS", "name", name) },
		}
		if ln != nil {
			mc.CoverBase = mpris.CoverBase(ln.Addr())
		}
		// A desktop's session bus can restart under a running box (a new
		// login): MPRIS connects again, as every surface starts again.
		sup.Restarting(ctx, "MPRIS", func(ctx context.Context) error { return mpris.Run(ctx, mc) })
	}
	if s.household != nil {
		followHousehold(ctx, sup, s.household, s.core, s.log)
	}
	if s.ha != nil {
		s.ha.Start(ctx, sup, s.log)
		if cfg.HAAdvertise {
			var netd haserve.Announcer // a nil *netclient.Client is not a nil Announcer
			if s.netd != nil {
				netd = s.netd
			}
			s.ha.Announce(ctx, sup, netd, s.log)
		}
	}
}

// shutdown ends the servers, giving requests in flight until limit.
func (s *surfaces) shutdown(limit time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	_ = s.api.Shutdown(ctx)
	if s.ha != nil {
		_ = s.ha.Shutdown(ctx)
	}
}

// resetPoll is how often the reset file is looked for after the start. On
// the box it can only appear while the box is off (the SD card is inside),
// so this is for development setups; a stat every few seconds costs nothing.
const resetPoll = 2 * time.Second

// openAuth opens the administrator password and the names the API answers
// to, and acts on a reset file placed while the box was off, before the API
// serves anything. host is the box's host name.
func openAuth(cfg Config, h hooks, clk clock.Clock, log *slog.Logger) (m *auth.Manager, hosts *auth.Hosts, host string, err error) {
	m, err = auth.New(auth.Config{Dir: cfg.Data, Params: h.passwordParams, Clock: clk})
	if m == nil {
		return nil, nil, "", err
	}
	if err != nil {
		log.Error("administrator password", "error", err) // m stays protected: fail closed
	}
	if host = cfg.Hostname; host == "" {
		if host, err = os.Hostname(); err != nil {
			log.Warn("no host name: the API answers to IP addresses and localhost only", "error", err)
		}
	}
	if cfg.MountBoot != "" {
		if dev, err := bootfs.Mount(cfg.MountBoot); err != nil {
			log.Warn("boot partition not readable: no password reset from the SD card", "error", err)
		} else {
			log.Info("boot partition mounted read-only", "device", dev, "dir", cfg.MountBoot)
		}
	}
	if cfg.AdminResetFile != "" {
		resetReporter(cfg.AdminResetFile, log)(m.CheckReset(cfg.AdminResetFile))
	}
	return m, auth.NewHosts(host, cfg.AllowHosts), host, nil
}

func resetReporter(file string, log *slog.Logger) func(reset bool, err error) {
	return func(reset bool, err error) {
		if reset {
			log.Warn("administrator password removed: the reset file was found", "file", file)
		}
		if err != nil {
			log.Error("password reset", "error", err)
		}
	}
}
