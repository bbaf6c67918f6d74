package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

// jitter is d scaled by a random factor in [0.3, 1.7).
func jitter(rng *rand.Rand, d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.3 + 1.4*rng.Float64()))
}

// chaos is what happens to a box on its own: the power goes (SIGKILL,
// then a start), the radio station drops and comes back, hatd and netd
// crash and gokrazy starts them again. It returns when ctx ends.
func (s *soak) chaos(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.radioWeather(ctx) }()
	go func() { defer wg.Done(); s.daemonCrashes(ctx) }()
	rng := s.rng("kills")
	phase := time.Duration(float64(s.cfg.duration) * killPhase)
	for pause(ctx, jitter(rng, s.cfg.killEvery)) && time.Since(s.started) < phase {
		why := "random"
		if rng.IntN(3) == 0 {
			// One kill in three comes while the parent's change is being
			// written, where a torn file or a lost answer would show.
			why = "during a change"
			select {
			case <-s.model.sent:
			default:
			}
			select {
			case <-s.model.sent:
				pause(ctx, time.Duration(rng.IntN(6000))*time.Microsecond)
			case <-time.After(15 * time.Second):
			case <-ctx.Done():
				continue // the loop ends
			}
		}
		s.killAndRestart(ctx, why)
	}
	wg.Wait()
}

// killPhase is the part of the run in which kills come; the rest is one
// long life for the trends.
const killPhase = 0.6

// killAndRestart is a power cut as far as playerd knows: SIGKILL at this
// moment, whatever runs. Then, with every client held at the gate: the
// disk as the kill left it, a start, and everything acknowledged checked.
func (s *soak) killAndRestart(ctx context.Context, reason string) {
	proc, life, _ := s.box.current()
	s.gate.down.Store(true)
	killAt := time.Now()
	proc.kill()
	s.rec.count("kills", 1)
	if reason == "during a change" {
		s.rec.count("kills aimed at a change of the parent's", 1)
	}
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	s.control.reset()

	disk, corrupt := readDataDir(s.box.data)
	keepForTheReport(s.cfg.out, life, s.box.data)
	for _, c := range corrupt {
		s.rec.violate(life, "corrupt", "after the kill: %s", c)
	}
	why, held := s.views.explainDisk(disk, killAt)
	if why != "" {
		s.rec.violate(life, "lost", "player state after the kill: %s", why)
	}
	s.rec.count("player states on disk held to what was seen over 1 s before the kill", b2i(held))
	kind := s.views.kindOf(disk)
	startVolume := startVolumeOnDisk(s.box.data)

	started := time.Now()
	if err := s.box.startPlayerd(ctx); err != nil {
		s.rec.violate(life+1, "restart", "%v", err)
		if err := s.box.startPlayerd(ctx); err != nil {
			s.rec.violate(life+2, "restart", "again: %v", err)
			return // the clients see the box down; the report shows it
		}
	}
	s.rec.addRestart(time.Since(started), reason)
	newLife := s.box.lifeNow()
	s.gate.life.Store(int64(newLife))
	s.views.newLife(newLife)

	if a := s.parent.send(ctx, jsonReq("", "POST", "/api/admin/login", map[string]string{"password": adminPassword})); a.err != nil || a.code != 200 {
		s.rec.violate(newLife, "lost", "the administrator password after the restart: %d %v %s", a.code, a.err, a.body)
	}
	if a := s.parent.send(ctx, jsonReq("", "GET", "/api/status", nil)); a.err == nil && a.code == 200 {
		var st statusBody
		var r struct {
			Restrictions struct {
				Bedtime *struct {
					NightMax int `json:"night_max_volume"`
				} `json:"bedtime"`
			} `json:"restrictions"`
		}
		_ = json.Unmarshal(a.body, &st)
		_ = json.Unmarshal(a.body, &r)
		nightMax := 0
		if r.Restrictions.Bedtime != nil {
			nightMax = r.Restrictions.Bedtime.NightMax
		}
		if why := restoredAs(disk, st, startVolume, nightMax, kind); why != "" {
			s.rec.violate(newLife, "restored", "the box started %s", why)
		}
	} else {
		s.rec.violate(newLife, "restart", "status after the start: %d %v", a.code, a.err)
	}
	s.model.verify(ctx, newLife)
	s.ha.verify(ctx, newLife)
	_ = s.library.refresh(ctx, false)
	s.rec.setHidden(hiddenInUploads(s.box.media))
	s.gate.down.Store(false)
}

// readDataDir reads the player state the kill left, and names every JSON
// file in the data directory that does not parse.
func readDataDir(dir string) (state.Saved, []string) {
	var corrupt []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || state.IsTemp(d.Name()) || !strings.HasSuffix(d.Name(), ".json") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err == nil && !json.Valid(data) {
			corrupt = append(corrupt, d.Name()+" does not parse")
		}
		return nil
	})
	var s state.Saved
	if err := state.ReadJSON(filepath.Join(dir, state.FileName), &s); err != nil && !errors.Is(err, fs.ErrNotExist) {
		corrupt = append(corrupt, "state: "+err.Error())
	}
	return s, corrupt
}

// startVolumeOnDisk is the settings' startup volume (30 by default).
func startVolumeOnDisk(dir string) int {
	var st struct {
		Audio struct {
			Startup *int `json:"startup_volume"`
		} `json:"audio"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil || json.Unmarshal(data, &st) != nil || st.Audio.Startup == nil {
		return 30
	}
	return *st.Audio.Startup
}

// radioWeather takes the station away now and then: its server gone
// (connections cut, new ones refused) or its link down (silence), for a
// few seconds to a minute.
func (s *soak) radioWeather(ctx context.Context) {
	rng := s.rng("radio weather")
	every := max(s.cfg.duration/20, 45*time.Second)
	for pause(ctx, jitter(rng, every)) {
		if rng.IntN(2) == 0 {
			s.station.down()
			s.rec.count("station server down", 1)
			pause(ctx, time.Duration(3+rng.IntN(28))*time.Second)
			if err := s.station.up(); err != nil {
				s.rec.violate(0, "soak", "the station does not come back: %v", err)
			}
		} else {
			if err := s.lab.setLink(false); err != nil {
				s.rec.violate(0, "soak", "%v", err)
			}
			s.rec.count("station link down", 1)
			pause(ctx, time.Duration(5+rng.IntN(36))*time.Second)
			if err := s.lab.setLink(true); err != nil {
				s.rec.violate(0, "soak", "%v", err)
			}
		}
	}
}

// daemonCrashes kills hatd or netd; gokrazy starts a service again after
// a second or so, and playerd must ride it out.
func (s *soak) daemonCrashes(ctx context.Context) {
	rng := s.rng("daemon crashes")
	every := max(s.cfg.duration/10, 60*time.Second)
	for pause(ctx, jitter(rng, every)) {
		name := []string{"hatd", "netd"}[rng.IntN(2)]
		s.box.mu.Lock()
		p := map[string]*process{"hatd": s.box.hatd, "netd": s.box.netd}[name]
		s.box.mu.Unlock()
		p.kill()
		s.rec.count(name+" crashes", 1)
		pause(ctx, time.Duration(1000+rng.IntN(2000))*time.Millisecond)
		var err error
		if name == "hatd" {
			err = s.box.startHatd()
		} else {
			err = s.box.startNetd()
		}
		if err != nil {
			s.rec.violate(0, "soak", "%s does not start again: %v", name, err)
		}
	}
}

// keepForTheReport copies the player state a kill left into out/kills, for
// looking into a finding.
func keepForTheReport(out string, life int, data string) {
	b, err := os.ReadFile(filepath.Join(data, state.FileName))
	if err != nil {
		return
	}
	dir := filepath.Join(out, "kills")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("life-%d-state.json", life)), b, 0o644)
}
