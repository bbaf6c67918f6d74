package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/metrics"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/speech"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// app is the running box: the parts run starts and the API reaches.
type app struct {
	cfg      Config
	log      *slog.Logger
	settings settings.Settings
	boxID    string
	lib      *library.Library
	player   *player.Player
	saver    *state.Saver
	saved    atomic.Pointer[state.Saved] // newest persistent state, for the home screen
	homeCfg  *home.Config
	metrics  *metrics.Reader
	battery  *battery // nil without -hat
	display  *display.Display
	speech   *speech.Service
}

func run(ctx context.Context, cfg Config, log *slog.Logger) error {
	opener, err := output.Parse(cfg.Output)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Data, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	a := &app{cfg: cfg, log: log}
	if a.settings, err = settings.Load(cfg.Data); err != nil {
		log.Warn("settings", "error", err)
	}
	if a.boxID, err = settings.BoxID(cfg.Data); err != nil {
		return err
	}
	if a.homeCfg, err = home.LoadConfig(cfg.Data); err != nil {
		log.Warn("home screen", "error", err)
	}
	a.lib = library.New(cfg.Media, filepath.Join(cfg.Data, "library-cache.json"))
	start := time.Now()
	stats, err := a.lib.Scan()
	if err != nil {
		log.Error("library scan", "error", err) // the API still answers; a rescan may succeed later
	} else {
		log.Info("library scanned", "folders", stats.Folders, "tracks", stats.Tracks, "read", stats.Read, "skipped", stats.Skipped, "took", time.Since(start).Round(time.Millisecond))
	}
	restored, err := state.Load(cfg.Data)
	if err != nil {
		log.Warn("player state unreadable, starting fresh", "error", err)
	}
	a.saved.Store(&restored)
	a.saver = state.NewSaver(cfg.Data, func(err error) { log.Error("state", "error", err) })
	a.player = player.New(player.Config{
		Open:           opener,
		Catalog:        a.lib,
		MaxVolume:      a.settings.Audio.MaxVolume,
		StartVolume:    a.settings.Audio.StartupVolume,
		AnnounceVolume: a.settings.Audio.AnnouncementVolume,
		Restored:       restored,
		Save: func(s state.Saved) {
			a.saved.Store(&s)
			a.saver.Save(s)
		},
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
	if a.display, err = a.newDisplay(); err != nil {
		return err
	}
	a.speech = a.newSpeech()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv, ln := newServer(a.handler(), ln)
	log.Info("playerd ready", "listen", ln.Addr().String(), "version", cfg.Version, "output", cfg.Output, "memory_limit", memoryLimit())

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(5)
	go func() { defer wg.Done(); a.saver.Run(ctx) }()
	go func() { defer wg.Done(); _ = a.speech.Run(ctx) }()
	go func() { defer wg.Done(); _ = a.display.Run(ctx) }()
	go func() {
		defer wg.Done()
		if err := a.player.Run(ctx); err != nil {
			errc <- fmt.Errorf("player: %w", err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http: %w", err)
		}
	}()
	a.startBattery(ctx, &wg)

	var runErr error
	poweringOff := false
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	case <-a.battery.criticalC():
		poweringOff = true
		a.prepareShutdown()
	}
	cancel()
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
	}
	return runErr
}

func (a *app) handler() http.Handler {
	return api.NewHandler(api.Deps{
		Version: a.cfg.Version,
		Log:     a.log,
		Player:  a.player,
		Library: a.lib,
		Home:    func() any { return a.home() },
		Info:    func() any { return a.info() },
		Metrics: func() any { return a.metrics.Read() },
		Hat:     a.battery.hatSource(),
		Display: a.display,
		Speaker: a.speech,
	})
}

func (a *app) home() home.Home {
	cfg := a.homeCfg
	if cfg == nil {
		cfg = home.Defaults(a.lib.TopLevel())
	}
	return home.Build(cfg, a.lib.Folders(), a.saved.Load().Resume, a.settings.Language)
}

// info is GET /api/info: the version and what interfaces need to know.
func (a *app) info() map[string]any {
	s := a.settings
	return map[string]any{
		"version":             a.cfg.Version,
		"box_id":              a.boxID,
		"language":            s.Language,
		"backend":             "storybox",
		"simulation":          false,
		"settings_persistent": true,
		"max_volume":          s.Audio.MaxVolume,
		"startup_volume":      s.Audio.StartupVolume,
		"announcement_volume": s.Audio.AnnouncementVolume,
		"audio":               s.Audio,
		"output":              a.cfg.Output,
		"library":             map[string]any{"scanned": a.lib.Scanned(), "folders": len(a.lib.Folders())},
	}
}
