// Package box is the core every surface of playerd shares: one catalog of
// folders (the library with the parent's stations and podcasts), the
// parental rules, the player, the saver of its state, the settings, the
// announcements, one way to switch the power, and one change feed.
//
// New builds the core in one fixed order and starts nothing; Run runs it.
// The surfaces (the local API, the home-automation API, the screen, card
// readers and buttons, MPRIS, the battery monitor) are built by
// playerd's main from the core's facets, each taking only what it needs;
// none of them builds a part of the core, and none is handed another: what
// two surfaces share meets here (Screen, HomeAutomation, Cards, Wiring),
// and what the core changes, they hear from Changes. The core imports no
// surface (services/playerd/layers_test.go).
package box

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/playerd/internal/backup"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/events/playerfeed"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/household"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/measure"
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/radio"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/speech"
	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/stream"
	"github.com/storybox/storybox/services/playerd/internal/wiring"
)

// Config is what the core is told. Media, Data and Output are required.
type Config struct {
	Media, Data string
	// Output is the audio output as the -output flag names it (null,
	// wav:FILE, alsa[:CARD,DEV]).
	Output  string
	Version string
	Log     *slog.Logger
	// Clock is the time of the parental rules, the idle time and the
	// podcast refresh; nil: the machine's.
	Clock clock.Clock
	// PowerOff and Reboot switch the box; nil: the system's on gokrazy,
	// and elsewhere a request is only logged (a development machine).
	PowerOff, Reboot power.Func
	// Uploads bounds uploads to the library; zero: library.DefaultLimits.
	Uploads library.Limits
	// Speech: the local speech program and its voice data, and an optional
	// speech server on the home network tried first.
	SpeechProgram, SpeechData, SpeechRemote string
	// Fetch is the policy for stations, feeds and covers; StreamReadTimeout
	// how long a silent server may stall (zero: the streams' default).
	Fetch             fetch.Policy
	StreamReadTimeout time.Duration
	// HoldScan, when set, holds the library scans' file reads until it is
	// closed, so a test sees the box while its first scan runs.
	HoldScan <-chan struct{}
	// Headphones: where they are looked for (headphones.go).
	Headphones HeadphoneHooks
}

// Box is the running core. Create it with New and run it with Run.
type Box struct {
	cfg   Config
	log   *slog.Logger
	clock clock.Clock
	id    string // the box id; "" when it could not be saved

	settings *settings.Store
	lib      *library.Library
	loudness *measure.Store
	radio    *radio.Service
	catalog  *Catalog
	rules    *rules.Keeper
	player   *player.Player
	saver    *state.Saver
	speech   *speech.Service
	power    *Power
	ha       *HomeAutomation
	feed     *events.Bus
	notify   notifiers // the feed, as the owners of state tell it (feed.go)
	messages *message.Board
	nav      *navStore
	modes    *modeStore
	// The parent's cards and input wiring: the core keeps them, what a
	// card does and what the readers and buttons found, so that the admin
	// API and the readers meet here and a backup holds them.
	cardStore *cards.Store
	cards     *cards.Service
	wiring    *wiring.Store
	streams   stream.Config
	phones    *phones // the second output (headphones.go)
	// household is the folder shared with the other boxes, where the cards
	// and the stations are kept; nil without a box id.
	household *household.Store

	saved   atomic.Pointer[state.Saved] // newest persistent state
	zone    atomic.Pointer[time.Location]
	screen  atomic.Pointer[screenBox] // the screen's notices, once attached
	storeMu sync.Mutex                // composes the state for the saver (store)
	ruleMu  sync.Mutex                // one change of the parental rules at a time
	restore sync.Mutex                // one restore at a time
}

// New builds the core in its one order: a restore a crash interrupted is
// completed; the settings and the box id; the home-automation pairing; the
// library from its scan cache (a directory walk, no media file read, so
// the player resumes at once); the stations and podcasts, and the catalog
// of both; the saved state; the parental rules, which gate the player; the
// player; the announcements; the cards and the input wiring; the
// navigation. A file that cannot be read is logged and its defaults used:
// the box always starts.
func New(cfg Config) (*Box, error) {
	opener, err := output.Parse(cfg.Output)
	if err != nil {
		return nil, err
	}
	if cfg.Media == "" || cfg.Data == "" {
		return nil, errors.New("box: Media and Data are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.NewSystem()
	}
	b := &Box{cfg: cfg, log: cfg.Log, clock: cfg.Clock, feed: events.New(events.Config{})}
	log := b.log
	// Each owner of state below is handed its notifier as it is built:
	// see notifiers.
	n := notifiers{b.feed, log}
	b.notify = n
	if err := state.MkdirAll(cfg.Data, 0o755); err != nil {
		log.Error("data directory", "error", err) // playing goes on; /api/info tells that saving fails
	}
	// Before anything here writes: the writes a power cut interrupted.
	if n := state.RemoveAllTemps(cfg.Data); n > 0 {
		log.Info("removed the temporary files of interrupted writes", "files", n)
	}
	restoredNow := false // a restore completed now, whose cards and stations replace the household's
	if done, err := backup.Recover(cfg.Data); err != nil {
		log.Error("restore journal", "error", err)
	} else if done {
		log.Warn("completed a restore that was interrupted")
		restoredNow = true
	}
	if b.settings, err = settings.Open(cfg.Data); err != nil {
		log.Warn("settings", "error", err)
	}
	if b.id, err = settings.BoxID(cfg.Data); err != nil {
		log.Error("box id not saved; /api/info has none until a start can save it", "error", err)
	}

	b.openHomeAutomation()

	b.lib = library.New(cfg.Media, filepath.Join(cfg.Data, "library-cache.json"), n.catalog(events.CatalogLibrary))
	if cfg.HoldScan != nil {
		b.lib.HoldReads(cfg.HoldScan)
	}
	if cfg.Uploads != (library.Limits{}) {
		b.lib.SetLimits(cfg.Uploads)
	}
	if _, err := b.lib.ScanCached(); err != nil {
		log.Error("library", "error", err)
	}
	b.openLoudness()
	if b.radio, err = radio.New(cfg.Data, radio.Options{Policy: cfg.Fetch, Clock: b.clock, OnChange: n.catalog(events.CatalogRadio)}); err != nil {
		log.Error("radio", "error", err)
	}
	b.openHousehold()
	if b.household != nil {
		if err := b.radio.Share(b.household, restoredNow); err != nil {
			log.Warn("shared stations and podcasts", "error", err)
		}
	}
	b.streams = stream.Config{Policy: cfg.Fetch, ReadTimeout: cfg.StreamReadTimeout, OnRetry: func(url string, err error, wait time.Duration) {
		log.Warn("stream dropped, reconnecting", "url", url, "error", err, "wait", wait)
	}}.Defaults()
	b.catalog = &Catalog{lib: b.lib, radio: b.radio}

	restored, err := state.Load(cfg.Data)
	if err != nil {
		log.Warn("player state unreadable, starting fresh", "error", err)
	}
	b.newRules(restored) // the counter is theirs, the rest the player's
	restored.Listening = nil
	b.saved.Store(&restored)
	b.saver = state.NewSaver(cfg.Data, b.reportSave)
	b.modes = &modeStore{dir: cfg.Data, changed: n.section(SectionFolderModes)}
	if err := b.modes.load(); err != nil {
		log.Warn("folder modes", "error", err)
	}
	audio := b.settings.Get().Audio
	b.player = player.New(player.Config{
		Open:           opener,
		Catalog:        b.catalog,
		OpenRemote:     b.openRemote,
		MaxVolume:      audio.MaxVolume,
		MinVolume:      audio.MinVolume,
		Calm:           b.settings.Get().Calm,
		StartVolume:    audio.StartupVolume,
		AnnounceVolume: audio.AnnouncementVolume,
		Normalize:      audio.Normalize,
		Levels:         player.MeasuredLevels(b.loudness),
		Restored:       restored,
		Gate:           b.rules,
		FolderMode:     b.modes.of,
		Save:           func(s state.Saved, u state.Urgency) { b.store(&s, nil, u) },
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
	b.speech = b.newSpeech()
	b.power = newPower(cfg.PowerOff, cfg.Reboot, log)
	// The machine's time, as the screen's: it wakes at a message's expiry
	// by its own clock.
	b.messages = message.NewBoard(nil, n.message)
	if b.cardStore, err = cards.Load(cfg.Data, n.section(SectionCards)); err != nil {
		log.Warn("card mappings", "error", err)
	}
	if b.household != nil {
		if err := b.cardStore.Share(b.household, restoredNow); err != nil {
			log.Warn("shared card mappings", "error", err)
		}
	}
	if b.cards, err = b.newCards(); err != nil {
		log.Warn("unknown cards", "error", err) // the list starts empty
	}
	if b.wiring, err = wiring.Load(cfg.Data, n.section(SectionInput)); err != nil {
		log.Warn("input wiring", "error", err)
	}
	b.nav = &navStore{dir: cfg.Data, changed: n.section(SectionNavigation)}
	if err := b.nav.load(); err != nil {
		log.Warn("home screen", "error", err)
	}
	b.settings.OnChange(b.applySettings)
	b.newPhones()
	b.settings.OnChange(n.settings) // after the player has the new limits
	return b, nil
}

// The parts, for the surfaces. Each is safe for concurrent use.

// ID is the box's id, "" when it could not be saved.
func (b *Box) ID() string { return b.id }

// Catalog is the one set of folders every consumer of a folder id asks.
func (b *Box) Catalog() *Catalog { return b.catalog }

// Library is the media library itself, for its scan and report.
func (b *Box) Library() *library.Library { return b.lib }

// Radio is the parent's stations and podcasts.
func (b *Box) Radio() *radio.Service { return b.radio }

// Player is the one path every player command takes, from every surface,
// so the parental rules that gate it cover them all.
func (b *Box) Player() *player.Player { return b.player }

// Rules are the parental rules in force.
func (b *Box) Rules() *rules.Keeper { return b.rules }

// Settings are the parent's settings.
func (b *Box) Settings() *settings.Store { return b.settings }

// Speech reads texts aloud.
func (b *Box) Speech() *speech.Service { return b.speech }

// Power is the one way to reboot or switch off the box.
func (b *Box) Power() *Power { return b.power }

// Changes is the change feed: every owner of the core's state tells it of
// its changes (notifiers); the screen, GET /api/events, MPRIS and the
// home-automation stream read it.
func (b *Box) Changes() *events.Bus { return b.feed }

// Messages is the message on screen, for everyone who shows or reads one.
func (b *Box) Messages() *message.Board { return b.messages }

// Cards is what a card read does, the parent's mappings, teach mode and
// the cards read: the readers hand it ids, the admin API manages it.
func (b *Box) Cards() *cards.Service { return b.cards }

// Wiring is how readers and buttons are wired and what the inputs found
// connected: the admin API changes the one and reads the other, the
// readers and buttons follow the one and report the other.
func (b *Box) Wiring() *wiring.Store { return b.wiring }

// Resume is the newest resume points, by folder id.
func (b *Box) Resume() map[string]state.ResumePoint { return b.saved.Load().Resume }

// ResumeIndex is the track a folder was left at, for resume cards.
func (b *Box) ResumeIndex(folderID string) (int, bool) {
	rp, ok := b.saved.Load().Resume[folderID]
	return rp.Index, ok
}

// Run runs the core until ctx ends or the player fails: the player, the
// saver, the rules, the announcements, the stations' feeds, the library's
// first scan, the change feed's publishers and the idle checks. Surfaces
// stop first; Run returns once every part has stopped and the player's
// final state is on disk.
func (b *Box) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	b.startFeed(ctx, &wg)
	wg.Go(func() {
		// A first scan that failed is tried again until one completes;
		// only then, or a second scan would queue behind a slow first one.
		if b.scanLibrary(ctx); !b.lib.Scanned() {
			b.scanUntilDone(ctx)
		}
	})
	wg.Go(func() { b.saver.Run(ctx) })
	wg.Go(func() { b.runLoudness(ctx) })
	wg.Go(func() { _ = b.speech.Run(ctx) })
	wg.Go(func() { _ = b.rules.Run(ctx, b.player) })
	wg.Go(func() { b.radio.Run(ctx) })
	wg.Go(func() { b.runIdle(ctx) })
	wg.Go(func() { b.phones.watcher.Run(ctx) })
	err := b.player.Run(ctx)
	if err != nil {
		err = fmt.Errorf("player: %w", err)
	}
	cancel()
	wg.Wait()
	b.saver.Flush() // the player saved its final state on the way out
	return err
}

// Close ends the change feed, so event streams end and their connections
// can close before the servers shut down.
func (b *Box) Close() { b.feed.Close() }

// PrepareShutdown pauses playback so the final saved state keeps the
// position, before the power is switched.
func (b *Box) PrepareShutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := b.player.Do(ctx, player.Command{Action: player.ActPause}); err != nil && !isConflict(err) {
		b.log.Warn("pause before power-off", "error", err)
	}
}

// scanLibrary is the full scan at start. A bad file is one log line here
// and a problem in /api/info, never a reason to stop.
func (b *Box) scanLibrary(ctx context.Context) {
	start := time.Now()
	stats, err := b.lib.ScanContext(ctx)
	if err != nil {
		if ctx.Err() == nil {
			b.log.Error("library scan", "error", err) // the API still answers; a rescan may succeed later
		}
		return
	}
	for _, p := range b.lib.Report().Problems {
		b.log.Warn("media file", "path", p.Path, "error", p.Error)
	}
	b.log.Info("library scanned", "folders", stats.Folders, "tracks", stats.Tracks, "read", stats.Read,
		"skipped", stats.Skipped, "problems", stats.Problems, "took", time.Since(start).Round(time.Millisecond))
	// The scan's working memory (the cache file and its map, the tag
	// readers' buffers) is garbage now, several times what the library
	// keeps; handing it back at once keeps the idle box small, where the
	// runtime would hold it for minutes.
	debug.FreeOSMemory()
}

// scanUntilDone repeats a library scan that failed at start (the media
// directory missing or unreadable, say, on a card being replaced) until one
// completes, so the library comes back without a restart.
func (b *Box) scanUntilDone(ctx context.Context) {
	retry := daemon.Backoff{Max: 5 * time.Minute}
	for !b.lib.Scanned() && retry.Wait(ctx) {
		if stats, err := b.lib.Scan(); err == nil || b.lib.Scanned() {
			b.log.Info("library scanned after all", "folders", stats.Folders, "tracks", stats.Tracks)
			return
		}
	}
}

// startFeed publishes what changes on its own: the player (through its
// snapshots) and library scans, whoever started them. Each takes its
// starting point before anything runs, so no change is missed.
func (b *Box) startFeed(ctx context.Context, wg *sync.WaitGroup) {
	feed := playerfeed.New(b.player, b.feed, nil, func(err error) { b.log.Error("player events", "error", err) })
	wg.Go(func() { feed.Run(ctx) })
	scanned := b.lib.Changed()
	wg.Go(func() { b.publishScans(ctx, scanned) })
	progressed := b.lib.Progressed()
	wg.Go(func() { b.publishProgress(ctx, progressed, scanProgressEvery) })
}

// openRemote is the player's way to stations and episodes.
func (b *Box) openRemote(t library.Track, rate int) (player.Remote, error) {
	return stream.Open(b.streams, stream.Options{URL: t.URL, Live: t.Live(), Duration: t.Duration, Rate: rate}), nil
}

// applySettings runs after every change of the settings: the player's
// volume limits and the rules' time zone. Speech reads its voice
// at each announcement; the surfaces follow the settings themselves.
func (b *Box) applySettings(old, s settings.Settings) {
	if old.Audio != s.Audio {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		au := s.Audio
		if _, err := b.player.SetVolumes(ctx, player.Volumes{Max: au.MaxVolume, Start: au.StartupVolume, Announce: au.AnnouncementVolume, Min: au.MinVolume}); err != nil {
			b.log.Error("apply volume limits", "error", err)
		}
		if _, err := b.player.SetNormalize(ctx, au.Normalize); err != nil {
			b.log.Error("apply normalisation", "error", err)
		}
	}
	if old.Calm != s.Calm {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := b.player.SetCalm(ctx, s.Calm); err != nil {
			b.log.Error("apply calm mode", "error", err)
		}
	}
	b.setZone(s)
	b.log.Info("settings changed")
}
