package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/metrics"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/radio"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/speech"
	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/stream"
	"github.com/storybox/storybox/services/playerd/internal/sysinfo"
	"github.com/storybox/storybox/services/playerd/internal/system"
)

// app is the running box: the parts run starts and the API reaches.
type app struct {
	cfg      Config
	log      *slog.Logger
	settings *settings.Store
	boxID    string
	lib      *library.Library
	player   *player.Player
	saver    *state.Saver
	saved    atomic.Pointer[state.Saved] // newest persistent state, for the home screen
	homeCfg  atomic.Pointer[home.Config] // nil: derived from the library
	metrics  *metrics.Reader
	system   system.Reader
	net      api.Connectivity // nil without -net
	battery  *battery         // nil without -hat
	display  *display.Display
	speech   *speech.Service
	auth     *auth.Manager
	hosts    *auth.Hosts
	adm      adminState
	hostname string
	ha       *homeAutomation // nil: the home-automation API is off
	cards    *cards.Service
	input    *input.Manager
	// The parent's files of cards and input, for the backup: Read, Check
	// (cards.Check, input.CheckWiring) and, after a restore,
	// cardStore.Reload and input.Reload.
	cardStore *cards.Store
	wiring    *input.WiringStore
	events    *events.Bus
	radio     *radio.Service
	streams   stream.Config
	catalog   catalog                       // the library with the stations and podcasts
	rules     *rules.Keeper                 // the parental rules: the player's gate
	zone      atomic.Pointer[time.Location] // the settings' time zone, for the rules

	storeMu  sync.Mutex // composes the state for the saver (store)
	parental sync.Mutex // one change of the parental rules at a time
}

func run(ctx context.Context, cfg Config, log *slog.Logger) error {
	start := time.Now()
	if cfg.Listener != nil {
		defer cfg.Listener.Close() // also when run fails before it serves
	}
	opener, err := output.Parse(cfg.Output)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Data, 0o755); err != nil {
		log.Error("data directory", "error", err) // playing goes on; /api/info tells that saving fails
	}
	a := &app{cfg: cfg, log: log, events: events.New(events.Config{})}
	if err := a.newAuth(); err != nil {
		return err
	}
	a.loadConfig()
	if a.boxID, err = settings.BoxID(cfg.Data); err != nil {
		log.Error("box id not saved; /api/info has none until a start can save it", "error", err)
	}
	a.lib = library.New(cfg.Media, filepath.Join(cfg.Data, "library-cache.json"))
	if cfg.holdScan != nil {
		a.lib.HoldReads(cfg.holdScan)
	}
	// The view from the scan cache takes a directory walk and reads no media
	// file, so the player can resume at once; the full scan runs while the
	// API serves (scanLibrary), and nothing in a media file can keep the box
	// from coming up.
	if _, err := a.lib.ScanCached(); err != nil {
		log.Error("library", "error", err)
	}
	a.newRadio()
	restored, err := state.Load(cfg.Data)
	if err != nil {
		log.Warn("player state unreadable, starting fresh", "error", err)
	}
	a.newRules(restored) // the counter is theirs, the rest the player's
	restored.Listening = nil
	a.saved.Store(&restored)
	a.saver = state.NewSaver(cfg.Data, a.reportSave)
	audio := a.settings.Get().Audio
	a.player = player.New(player.Config{
		Open:           opener,
		Catalog:        a.catalog,
		OpenRemote:     a.openRemote,
		OnNowPlaying:   a.nowPlaying,
		MaxVolume:      audio.MaxVolume,
		StartVolume:    audio.StartupVolume,
		AnnounceVolume: audio.AnnouncementVolume,
		Restored:       restored,
		Gate:           a.rules,
		Save:           func(s state.Saved, u state.Urgency) { a.store(&s, nil, u) },
		OnSkip: func(t library.Track, err error) {
			log.Warn("track skipped", "track", t.Title, "error", err)
		},
		OnDevice: func(err error) {
			if err != nil {
				log.Error("audio output", "error", err)
			} else {
				log.Info("audio output recovered")
			}
		},
	})
	a.metrics = metrics.New("/proc", "/sys", cfg.Media)
	a.battery = newBattery(cfg.Hat)
	var netw system.Network
	a.net, netw = newNetwork(cfg.Net)
	a.system = system.Reader{Net: netw, Battery: a.battery.systemBattery}
	a.newHA() // before the display, which shows its pairing card
	if a.display, err = a.newDisplay(); err != nil {
		return err
	}
	a.speech = a.newSpeech()
	a.startAdmin()
	if err := a.newInput(); err != nil {
		return err
	}

	srv := newServer(a.handler())
	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			log.Error("listen", "error", err) // serve tries again
		}
	}
	if ln != nil {
		a.adm.ready = sysinfo.MarkReady("/proc", start)
		log.Info("playerd ready", "listen", ln.Addr().String(), "version", cfg.Version, "output", cfg.Output, "memory_limit", memoryLimit(), "procs", runtime.GOMAXPROCS(0))
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	a.startEvents(ctx, &wg)
	wg.Add(7)
	go func() {
		defer wg.Done()
		// A first scan that failed is tried again until one completes;
		// only then, or a second scan would queue behind a slow first one.
		if a.scanLibrary(ctx); !a.lib.Scanned() {
			a.scanUntilDone(ctx)
		}
	}()
	go func() { defer wg.Done(); a.saver.Run(ctx) }()
	go func() { defer wg.Done(); _ = a.speech.Run(ctx) }()
	go func() { defer wg.Done(); _ = a.display.Run(ctx) }()
	go func() {
		defer wg.Done()
		if err := a.player.Run(ctx); err != nil {
			errc <- fmt.Errorf("player: %w", err)
		}
	}()
	go func() { defer wg.Done(); _ = a.rules.Run(ctx, a.player) }()
	go func() { defer wg.Done(); serve(ctx, srv, ln, cfg.Listen, log) }()
	wg.Go(func() { _ = a.input.Run(ctx) })
	wg.Go(func() { a.radio.Run(ctx) })
	a.startBattery(ctx, &wg)
	a.startMPRIS(ctx, &wg, ln)
	a.startResetWatch(ctx, &wg)
	wg.Go(func() { a.runIdleShutdown(ctx) })
	a.startHA(ctx, &wg)
	if cfg.onStart != nil {
		cfg.onStart(a)
	}

	var runErr error
	poweringOff := false
	var powerReq power.Action
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	case <-a.battery.criticalC():
		poweringOff = true
		a.prepareShutdown()
	case powerReq = <-a.adm.powerReq:
		a.prepareShutdown()
	}
	cancel()
	a.events.Close() // event streams end, so their connections can close
	shutdownCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	_ = srv.Shutdown(shutdownCtx)
	wg.Wait()
	a.saver.Flush() // the player saved its final state on the way out
	log.Info("playerd stopped")
	if poweringOff {
		if err := a.powerOff(); err != nil && runErr == nil {
			runErr = err
		}
	} else if powerReq != "" {
		if err := a.switchPower(powerReq); err != nil && runErr == nil {
			runErr = err
		}
	}
	return runErr
}

// scanLibrary is the full scan at start. A bad file is one log line here
// and a problem in /api/info, never a reason to stop.
func (a *app) scanLibrary(ctx context.Context) {
	start := time.Now()
	stats, err := a.lib.ScanContext(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Error("library scan", "error", err) // the API still answers; a rescan may succeed later
		}
		return
	}
	for _, p := range a.lib.Report().Problems {
		a.log.Warn("media file", "path", p.Path, "error", p.Error)
	}
	a.log.Info("library scanned", "folders", stats.Folders, "tracks", stats.Tracks, "read", stats.Read,
		"skipped", stats.Skipped, "problems", stats.Problems, "took", time.Since(start).Round(time.Millisecond))
	// The scan's working memory (the cache file and its map, the tag
	// readers' buffers) is garbage now, several times what the library
	// keeps; handing it back at once keeps the idle box small, where the
	// runtime would hold it for minutes.
	debug.FreeOSMemory()
}

func (a *app) handler() http.Handler {
	d := api.Deps{
		Version: a.cfg.Version,
		Log:     a.log,
		Player:  a.commands(),
		Library: a.catalog,
		Radio:   a.radio,
		Home:    func() any { return a.home() },
		Info:    func() any { return a.info() },
		Metrics: func() any { return a.metrics.Read() },
		System:  func() any { return a.system.Read() },
		Hat:     a.battery.hatSource(),
		Display: a.display,
		Speaker: a.speech,
		Net:     a.net,
		Auth:    a.auth,
		Hosts:   a.hosts,
		HA:      haAdmin{a},
		Cards:   a.cards,
		Input:   a.input,
		Events:  a.events,

		Restrictions: func() any { return a.rules.Restrictions() },
		Scan:         func() any { return a.lib.Progress() },
		Parental:     parentalAdmin{a: a, mu: &a.parental},
	}
	a.adminDeps(&d)
	return api.NewHandler(d)
}

// commands is the one path every player command takes, from the local API
// and the home-automation API alike, so rules that gate it cover both.
func (a *app) commands() api.Player { return a.player }

func (a *app) home() home.Home {
	folders, resume := a.visible(a.catalog.Folders(), a.saved.Load().Resume)
	return home.Build(a.navigation(), folders, resume, a.settings.Get().Language)
}

// info is GET /api/info: the version and what interfaces need to know.
func (a *app) info() map[string]any {
	s := a.settings.Get()
	info := map[string]any{
		"version":             a.cfg.Version,
		"language":            s.Language,
		"backend":             "storybox",
		"simulation":          false,
		"settings_persistent": true,
		"max_volume":          s.Audio.MaxVolume,
		"startup_volume":      s.Audio.StartupVolume,
		"announcement_volume": s.Audio.AnnouncementVolume,
		"audio":               s.Audio,
		"output":              a.cfg.Output,
		"library":             a.lib.Report(),
		"events":              a.events.Stats(),
		"storage":             a.storage(),
	}
	if a.boxID != "" {
		info["box_id"] = a.boxID
	}
	return info
}
