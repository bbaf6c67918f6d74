package main

import (
	"context"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/bootfs"
	"github.com/storybox/storybox/services/internal/supervise"
	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/chime"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/hat"
	"github.com/storybox/storybox/services/playerd/internal/hav1"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/httpserve"
	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/metrics"
	"github.com/storybox/storybox/services/playerd/internal/mpris"
	"github.com/storybox/storybox/services/playerd/internal/netclient"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/sysinfo"
	"github.com/storybox/storybox/services/playerd/internal/system"
)

// surfaces are what people and programs use the core through: the local
// API, the home-automation API, the touch screen, card readers and
// buttons, the battery board's service, MPRIS. Each is built from the
// core's parts and takes only what it needs of them.
type surfaces struct {
	cfg  Config
	h    hooks
	core *box.Box
	log  *slog.Logger
	host string // the box's host name

	auth    *auth.Manager
	api     *http.Server
	ha      *hav1.Server // nil: the home-automation API is off
	haSrv   *http.Server
	display *display.Display
	input   *input.Manager
	hat     *hat.Client // nil without -hat
}

// haDir holds the home-automation secrets inside the data directory.
const haDir = "home-automation"

// resetPoll is how often the reset file is looked for after the start. On
// the box it can only appear while the box is off (the SD card is inside),
// so this is for development setups; a stat every few seconds costs nothing.
const resetPoll = 2 * time.Second

func newSurfaces(cfg Config, h hooks, core *box.Box, clk clock.Clock, ready sysinfo.Ready, log *slog.Logger) (*surfaces, error) {
	s := &surfaces{cfg: cfg, h: h, core: core, log: log}
	hosts, err := s.openAuth(clk)
	if err != nil {
		return nil, err
	}
	if cfg.Hat != "" {
		s.hat = hat.NewClient(cfg.Hat, time.Second)
	}
	kernel := system.NewKernel("/proc")
	sys := system.Reader{Net: kernel, Battery: s.battery}
	var conn api.Connectivity
	if cfg.Net != "" {
		c := netclient.New(cfg.Net)
		conn, sys.Net = c, system.Netd{Daemon: c, Fallback: kernel}
	}
	machine := metrics.New("/proc", "/sys", cfg.Media)
	s.ha = s.openHA(clk)
	if err := s.openDisplay(conn); err != nil {
		return nil, err
	}
	cardService, err := s.openInput(clk)
	if err != nil {
		return nil, err
	}
	s.api = httpserve.New(api.NewHandler(api.Deps{
		Version:      cfg.Version,
		Log:          log,
		Player:       core.Player(),
		Library:      core.Catalog(),
		Radio:        core.Radio(),
		Home:         func() any { return core.Home() },
		Info:         func() any { return core.Info() },
		Metrics:      func() any { return machine.Read() },
		System:       func() any { return sys.Read() },
		Hat:          s.hatSource(),
		Display:      s.display,
		Speaker:      core.Speech(),
		Net:          conn,
		Auth:         s.auth,
		Hosts:        hosts,
		HA:           s.ha,
		Cards:        cardService,
		Input:        s.input,
		Events:       core.Changes(),
		Restrictions: func() any { return core.Rules().Restrictions() },
		Scan:         func() any { return core.Library().Progress() },
		Parental:     core.Parental(),
		Resume:       core.Resume,
		Settings:     core.Settings(),
		Navigation:   core,
		LibraryAdmin: core.LibraryAdmin(),
		SystemAdmin:  core.System(ready),
		Backup:       core.Backup(),
	}))
	if s.ha != nil {
		s.haSrv = httpserve.New(hav1.NewHandler(hav1.Deps{
			Log:     log,
			Version: cfg.Version,
			Name:    s.host,
			Pairing: s.ha.Pairing(),
			CA:      s.ha.Identity(),
			Player:  core.Player(),
			Covers:  core.Catalog(),
			Device:  func() hav1.Device { return hav1.DeviceOf(sys.Read(), machine.Read().UptimeSeconds) },
			Metrics: func() any { return machine.Read() },
			Output:  hav1.OutputOf(cfg.Output),
			Speaker: core.Speech(),
			Display: s.display,
			Power:   s.powerFor("home automation"),
			Events:  hav1.BusFeed{Bus: core.Changes(), Player: core.Player()},
			Auth:    s.auth,
			Hosts:   hosts,
		}))
		// Handshake failures (a client's first probe, plain HTTP, a scan)
		// are the client's business and would flood gokrazy's log.
		s.haSrv.ErrorLog = stdlog.New(io.Discard, "", 0)
	}
	// The surfaces follow the parent's settings from now on, and once now.
	follow := func(_, st settings.Settings) {
		s.display.Apply(displaySettings(st))
		hosts.Set(s.host, allowedHosts(cfg.AllowHosts, st))
	}
	core.Settings().OnChange(follow)
	follow(settings.Settings{}, core.Settings().Get())
	return s, nil
}

// openAuth opens the administrator password and the names the API answers
// to, and acts on a reset file placed while the box was off, before the API
// serves anything.
func (s *surfaces) openAuth(clk clock.Clock) (*auth.Hosts, error) {
	cfg := s.cfg
	m, err := auth.New(auth.Config{Dir: cfg.Data, Params: s.h.passwordParams, Clock: clk})
	if m == nil {
		return nil, err
	}
	if err != nil {
		s.log.Error("administrator password", "error", err) // m stays protected: fail closed
	}
	s.auth = m
	if s.host = cfg.Hostname; s.host == "" {
		if s.host, err = os.Hostname(); err != nil {
			s.log.Warn("no host name: the API answers to IP addresses and localhost only", "error", err)
		}
	}
	if cfg.MountBoot != "" {
		if dev, err := bootfs.Mount(cfg.MountBoot); err != nil {
			s.log.Warn("boot partition not readable: no password reset from the SD card", "error", err)
		} else {
			s.log.Info("boot partition mounted read-only", "device", dev, "dir", cfg.MountBoot)
		}
	}
	if cfg.AdminResetFile != "" {
		s.reportReset(m.CheckReset(cfg.AdminResetFile))
	}
	return auth.NewHosts(s.host, cfg.AllowHosts), nil
}

func (s *surfaces) reportReset(reset bool, err error) {
	if reset {
		s.log.Warn("administrator password removed: the reset file was found", "file", s.cfg.AdminResetFile)
	}
	if err != nil {
		s.log.Error("password reset", "error", err)
	}
}

// allowedHosts are the names of the configuration and the settings that
// the API answers to beside the system's own name, which stays allowed:
// the box is still reached by it until the network announces a new one.
func allowedHosts(configured []string, s settings.Settings) []string {
	extra := slices.Clone(configured)
	if s.HostName != "" {
		extra = append(extra, s.HostName, s.HostName+".local")
	}
	return append(extra, s.AllowedHosts...)
}

// openHA opens the home-automation API's identity and paired clients.
// Without a usable data directory or box id it stays off (logged): the box
// plays on.
func (s *surfaces) openHA(clk clock.Clock) *hav1.Server {
	if s.cfg.HAListen == "" && s.h.haListener == nil {
		return nil
	}
	srv, err := hav1.Open(hav1.ServerConfig{Dir: filepath.Join(s.cfg.Data, haDir), DeviceID: s.core.ID(),
		Host: s.host, Names: s.cfg.AllowHosts, Port: s.haPort(), Clock: clk, Addresses: s.h.certAddrs})
	if srv == nil {
		s.log.Error("home-automation API off", "error", err)
		return nil
	}
	if err != nil {
		s.log.Warn("home-automation API", "error", err)
	}
	return srv
}

func (s *surfaces) haPort() int {
	if s.h.haListener != nil {
		return s.h.haListener.Addr().(*net.TCPAddr).Port
	}
	_, p, _ := net.SplitHostPort(s.cfg.HAListen)
	n, _ := strconv.Atoi(p)
	return n
}

// powerFor is how a surface asks to reboot or switch off: the core's one
// power request. Nil where this machine cannot switch, so the surface does
// not offer it.
func (s *surfaces) powerFor(who string) func(action string) error {
	if !s.core.Power().CanSwitch() {
		return nil
	}
	return func(action string) error {
		act, err := power.ParseAction(action)
		if err != nil {
			return err
		}
		_, err = s.core.Power().Request(act, who)
		return err
	}
}

// openDisplay builds the touch screen from the -fb and -touch flags.
func (s *surfaces) openDisplay(conn api.Connectivity) error {
	core := s.core
	o := display.Options{
		Player:       core.Player(),
		Events:       core.Changes(),
		Home:         display.HomeFunc(func(context.Context) (home.Home, error) { return core.Home(), nil }),
		Covers:       core.Catalog(),
		Lang:         core.Settings().Get().Language,
		OnError:      func(err error) { s.log.Warn("display", "error", err) },
		Screen:       s.h.screen,
		Restrictions: core.Rules().Restrictions,
	}
	if s.ha != nil {
		o.Pairing, o.Fingerprint = s.ha.Pairing(), s.ha.Identity().Fingerprint()
	}
	if conn != nil { // the Wi-Fi setup screen joins through netd, as the API does
		o.Network = conn
	}
	d, problems, err := display.Open(s.cfg.Display, o)
	if err != nil {
		return err
	}
	if problems != nil {
		s.log.Warn("display", "error", problems)
	}
	if size, ok := d.ScreenSize(); ok && s.h.screen == nil {
		s.log.Info("framebuffer", "size", size)
	}
	s.display = d
	core.AttachScreen(d)
	return nil
}

func displaySettings(s settings.Settings) display.Settings {
	return display.Settings{Lang: s.Language, IdleOff: time.Duration(s.Display.IdleOffMinutes) * time.Minute, Brightness: s.Display.Brightness}
}

// openInput builds the cards and the inputs: card readers and media keys
// through evdev, buttons on GPIO lines (-input). Their commands take the
// player's one path, as the API's and the touch screen's do.
func (s *surfaces) openInput(clk clock.Clock) (*cards.Service, error) {
	core := s.core
	play := func(ctx context.Context, snd chime.Sound) error { return chime.Play(ctx, core.Player(), snd) }
	c, err := cards.New(cards.Options{
		Store:       core.Cards(),
		Player:      core.Player(),
		Catalog:     core.Catalog(),
		Resume:      core.ResumeIndex,
		Chime:       play,
		UnknownFile: filepath.Join(s.cfg.Data, cards.UnknownFileName),
		OnRead: func(r cards.Read) {
			if r.Error != "" {
				s.log.Info("card", "id", r.ID, "outcome", r.Outcome, "error", r.Error)
				return
			}
			s.log.Info("card", "id", r.ID, "outcome", r.Outcome)
		},
		OnError: func(err error) { s.log.Warn("cards", "error", err) },
		Clock:   clk,
	})
	if c == nil {
		return nil, err
	}
	if err != nil {
		s.log.Warn("unknown cards", "error", err) // the list starts empty
	}
	pressed := s.powerFor("power button")
	o := input.Options{
		Wiring: core.Wiring(),
		Cards:  c,
		Player: core.Player(),
		Chime:  play,
		PowerOff: func() {
			if pressed == nil {
				_, _ = core.Power().Request(power.PowerOff, "power button") // logs the dry run
			} else if err := pressed(string(power.PowerOff)); err != nil {
				s.log.Warn("power button", "error", err)
			}
		},
		OnDevice: func(d input.DeviceStatus, connected bool) {
			if connected {
				s.log.Info("input device connected", "role", d.Role, "name", d.Name, "id", d.Vendor+":"+d.Product, "path", d.Path)
			} else {
				s.log.Info("input device gone", "role", d.Role, "name", d.Name, "path", d.Path)
			}
		},
		OnError: func(err error) { s.log.Warn("input", "error", err) },
		Rescan:  s.h.inputRescan,
	}
	if s.cfg.Input == "auto" {
		o.Devices, o.GPIO = input.Evdev{}, input.ChipLines{}
	}
	if s.h.inputDevices != nil {
		o.Devices = s.h.inputDevices
	}
	if s.h.gpio != nil {
		o.GPIO = s.h.gpio
	}
	s.input, err = input.New(o)
	return c, err
}

// hatSource is the API's battery board status; without hatd it says that
// there is no board, so pollers get the same shape either way.
func (s *surfaces) hatSource() api.HatSource {
	if s.hat == nil {
		return hat.NotConfigured{}
	}
	return s.hat
}

// battery is the battery part of /api/system.
func (s *surfaces) battery() system.Battery {
	if s.hat == nil {
		return system.Battery{}
	}
	b := s.hat.Battery()
	return system.Battery{Available: b.Available, Percent: b.Percent, Charging: b.Charging}
}

// start runs the surfaces under sup until ctx ends.
func (s *surfaces) start(ctx context.Context, sup *supervise.Group, ln net.Listener) {
	cfg := s.cfg
	sup.Restarting(ctx, "display", s.display.Run)
	sup.Restarting(ctx, "input", s.input.Run)
	sup.Restarting(ctx, "API", func(ctx context.Context) error {
		httpserve.Serve(ctx, s.api, ln, cfg.Listen, httpserve.Limit, s.log)
		return nil
	})
	if s.hat != nil {
		sup.Restarting(ctx, "battery monitor", func(ctx context.Context) error {
			hat.NewMonitor(s.hat, hat.MonitorOptions{
				OnReachable: func(ok bool, err error) {
					if ok {
						s.log.Info("battery board service reachable", "socket", cfg.Hat)
					} else {
						s.log.Warn("battery board service unreachable", "error", err)
					}
				},
				OnLevel: func(c hat.LevelChange) { s.core.BatteryLevel(ctx, c) },
			}).Run(ctx)
			return nil
		})
	}
	if cfg.AdminResetFile != "" {
		sup.Restarting(ctx, "password reset watch", func(ctx context.Context) error {
			s.auth.WatchReset(ctx, cfg.AdminResetFile, resetPoll, s.reportReset)
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
			mc.CoverBase = "http://" + reachable(ln.Addr())
		}
		sup.Once(ctx, "MPRIS", func(ctx context.Context) error { return mpris.Run(ctx, mc) })
	}
	s.startHA(ctx, sup)
}

// startHA serves the v1 API and keeps its certificate current.
func (s *surfaces) startHA(ctx context.Context, sup *supervise.Group) {
	if s.ha == nil {
		return
	}
	ln := s.h.haListener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.HAListen); err != nil {
			s.log.Error("home-automation API: listen", "error", err) // serve tries again
		}
	}
	if ln != nil {
		s.log.Info("home-automation API ready", "listen", ln.Addr().String(), "fingerprint", s.ha.Identity().Fingerprint())
	}
	// The same connection limits as :8090, below TLS so a flood of
	// handshakes is bounded too.
	tlsConf := s.ha.Identity().TLSConfig()
	wrap := func(ln net.Listener) net.Listener { return hav1.Listener(httpserve.Limit(ln), tlsConf) }
	sup.Restarting(ctx, "home-automation API", func(ctx context.Context) error {
		httpserve.Serve(ctx, s.haSrv, ln, s.cfg.HAListen, wrap, s.log)
		return nil
	})
	sup.Restarting(ctx, "home-automation certificate", func(ctx context.Context) error {
		tick := s.h.certCheck
		if tick == nil {
			t := time.NewTicker(haCheckEvery)
			defer t.Stop()
			tick = t.C
		}
		s.ha.KeepCertificate(ctx, tick, func(renewed bool, err error) {
			if err != nil {
				s.log.Error("home-automation certificate", "error", err)
			} else {
				s.log.Info("home-automation certificate renewed", "valid_until", s.ha.Identity().Leaf().NotAfter)
			}
		})
		return nil
	})
	if s.cfg.HAAdvertise {
		port := s.haPort()
		if ln != nil {
			port = ln.Addr().(*net.TCPAddr).Port
		}
		svc := hav1.Service(s.host, s.host, s.core.ID(), port)
		sup.Once(ctx, "mDNS advertisement", func(ctx context.Context) error { return hav1.Advertise(ctx, svc) })
	}
}

// haCheckEvery is how often the box looks at its addresses and the
// certificate's dates; a new DHCP lease gets a certificate within this, and
// so does a step of the wall clock that makes the certificate due.
const haCheckEvery = 30 * time.Second

// shutdown ends the servers, giving requests in flight until limit.
func (s *surfaces) shutdown(limit time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	_ = s.api.Shutdown(ctx)
	if s.haSrv != nil {
		_ = s.haSrv.Shutdown(ctx)
	}
}

// reachable is addr as this machine's desktop reaches it: a listener on
// every address (":8090") is asked on loopback.
func reachable(addr net.Addr) string {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	ip := ta.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1) // a dual-stack listener takes IPv4 too
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(ta.Port))
}
