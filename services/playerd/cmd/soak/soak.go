package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// soak is one run: the box, the network around it, the household's clients
// and what they saw.
type soak struct {
	cfg     config
	log     *slog.Logger
	rec     *recorder
	gate    gate
	box     *daemons
	lab     *netLab
	station *station
	views   *views
	model   *model
	library *library
	parent  *client // the parent's browser: the admin area, with a session
	ha      *haClient
	control *control
	sampler *sampler
	started time.Time
	mp3     []byte
}

// adminPassword is the parent's password, set at the first start.
const adminPassword = "soak-password-1234"

// The base library: folders the parent never deletes, which cards, the
// parental rules and the navigation name. Uploads go to folders of their
// own ("Soak …"), which come and go.
var baseFolders = map[string][]float64{
	"Hoerspiele/Bobo":        {20, 20, 20},
	"Hoerspiele/Pippa":       {15, 25},
	"Musik/Lieder":           {12, 12, 12, 12},
	"Einschlafen/Sternchen":  {30, 30},
	"Einschlafen/Mondschein": {18},
}

// writeLibrary writes the base library: tones at 8 kHz keep it small (and
// the backups with media quick), the player resamples.
func writeLibrary(media string) error {
	for dir, lengths := range baseFolders {
		for i, secs := range lengths {
			path := filepath.Join(media, dir, fmt.Sprintf("Folge %d.wav", i+1))
			if err := testmedia.WriteTone(path, secs, 8000, 220*float64(i+1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// rng is a source for one part of the soak, from the seed and the part's
// name, so each part's choices are the same in every run with the seed
// whatever the others do.
func (s *soak) rng(part string) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, c := range []byte(part) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(s.cfg.seed, h))
}

func run(ctx context.Context, cfg config, log *slog.Logger) (bool, error) {
	if err := os.RemoveAll(cfg.out); err != nil {
		return false, err
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return false, err
	}
	mp3, err := os.ReadFile(cfg.stationMP3)
	if err != nil {
		return false, err
	}
	s := &soak{cfg: cfg, log: log, rec: newRecorder(log), views: newViews(), mp3: mp3}
	s.library = &library{s: s}

	runDir, err := os.MkdirTemp("", "soak")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(runDir)
	if s.lab, err = setupNet(os.Getpid()); err != nil {
		return false, err
	}
	defer s.lab.teardown()
	s.station = newStation(s.lab, mp3)
	if err := s.station.up(); err != nil {
		return false, err
	}
	defer s.station.close()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = s.station.reachable(rctx)
	cancel()
	if err != nil {
		return false, err
	}

	if s.box, err = newDaemons(cfg, filepath.Join(cfg.out, "box"), runDir); err != nil {
		return false, err
	}
	s.box.netns = s.lab.netdNS
	defer s.box.stopAll()
	if err := writeLibrary(s.box.media); err != nil {
		return false, err
	}
	if err := s.box.startHatd(); err != nil {
		return false, err
	}
	if err := s.box.startNetd(); err != nil {
		return false, err
	}
	if err := s.box.startPlayerd(ctx); err != nil {
		return false, err
	}
	s.gate.life.Store(1)
	s.views.newLife(1)
	s.control = &control{path: s.box.controlSocket()}
	s.parent = s.newClient("parent", "127.0.0.41", s.box.base, true)
	if err := s.firstStart(ctx); err != nil {
		return false, fmt.Errorf("first start: %w", err)
	}
	log.Info("soak running", "seed", cfg.seed, "duration", cfg.duration, "kill_every", cfg.killEvery, "warm_up", cfg.warmUp,
		"api", s.box.base, "station", s.station.base(), "out", cfg.out)

	s.started = time.Now()
	s.sampler = newSampler(s)
	mixCtx, stop := context.WithTimeout(ctx, cfg.duration)
	defer stop()
	var wg sync.WaitGroup
	for _, w := range s.workers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w(mixCtx)
		}()
	}
	s.chaos(mixCtx)
	wg.Wait()
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	// A last kill once everything is quiet: nothing acknowledged may be lost
	// there either.
	s.killAndRestart(ctx, "final")
	return s.report()
}

// workers are the household, each until ctx ends.
func (s *soak) workers() []func(context.Context) {
	var ws []func(context.Context)
	for i := range 4 {
		ws = append(ws, s.commandClient(i))
	}
	for i := range 8 {
		ws = append(ws, s.eventClient(i))
	}
	ws = append(ws, s.sentinel, s.poller(0), s.poller(1), s.homeAutomation, s.adminWorker, s.cardReader, s.sampler.run)
	return ws
}

// firstStart is what a parent does on the first day: a password, a
// station and a podcast, cards for the favourite folders, Home Assistant.
func (s *soak) firstStart(ctx context.Context) error {
	a := s.parent.send(ctx, jsonReq("", "PUT", "/api/admin/password", map[string]string{"new_password": adminPassword}))
	if a.err != nil || a.code != 200 {
		return fmt.Errorf("set the password: %d %v %s", a.code, a.err, a.body)
	}
	if err := s.library.refresh(ctx); err != nil {
		return err
	}
	rng := s.rng("first start")
	if err := s.setupRadio(ctx); err != nil {
		return err
	}
	if err := s.setupCards(ctx, rng); err != nil {
		return err
	}
	if a := s.parent.send(ctx, jsonReq("", "PUT", "/api/admin/navigation", navigation(rng))); a.code != 200 {
		return fmt.Errorf("set the navigation: %d %v %s", a.code, a.err, a.body)
	}
	s.model = newModel(s)
	if err := s.model.load(ctx); err != nil {
		return err
	}
	s.ha = newHAClient(s)
	return s.ha.pair(ctx)
}
