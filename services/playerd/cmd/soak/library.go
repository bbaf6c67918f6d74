package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// folder is one entry of /api/library.
type folder struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Relative string `json:"relative"`
	Tracks   []struct {
		ID string `json:"id"`
	} `json:"tracks"`
}

// library is the folders as the clients last read them.
type library struct {
	s       *soak
	mu      sync.Mutex
	folders []folder
}

func (l *library) refresh(ctx context.Context, gated ...bool) error {
	a, ok := l.s.parent.fetch(ctx, jsonReq("GET /api/library", "GET", "/api/library", nil, 200), len(gated) == 0 || gated[0])
	if !ok {
		return fmt.Errorf("GET /api/library: %d %v", a.code, a.err)
	}
	var fs []folder
	if err := a.json(&fs); err != nil {
		return err
	}
	kinds := map[string]string{}
	for _, f := range fs {
		kinds[f.ID] = f.Kind
	}
	l.mu.Lock()
	l.folders = fs
	l.mu.Unlock()
	if f, err := os.Create(filepath.Join(l.s.cfg.out, "library.txt")); err == nil {
		for _, x := range fs {
			fmt.Fprintf(f, "%s %s %s (%d tracks)\n", x.ID, x.Kind, x.Relative+x.Name, len(x.Tracks))
		}
		f.Close()
	}
	l.s.views.setKinds(kinds)
	return nil
}

// pick is a random folder to play, and the number of its tracks.
func (l *library) pick(rng *rand.Rand) (id string, tracks int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.folders) == 0 {
		return "", 0, false
	}
	f := l.folders[rng.IntN(len(l.folders))]
	return f.ID, len(f.Tracks), true
}

// base is the base library's folders (never deleted), by relative path.
func (l *library) base() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]string{}
	for _, f := range l.folders {
		if _, ok := baseFolders[f.Relative]; ok && f.Kind == "local" {
			out[f.Relative] = f.ID
		}
	}
	return out
}

// ofKind lists the folder ids of one kind.
func (l *library) ofKind(kind string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, f := range l.folders {
		if f.Kind == kind {
			out = append(out, f.ID)
		}
	}
	return out
}

// baseIDs are the base library's folder ids in a fixed order.
func (l *library) baseIDs() []string {
	b := l.base()
	var out []string
	for _, rel := range slices.Sorted(maps.Keys(baseFolders)) {
		if id, ok := b[rel]; ok {
			out = append(out, id)
		}
	}
	return out
}

// setupRadio adds the station (through its playlist) and the podcast.
func (s *soak) setupRadio(ctx context.Context) error {
	a := s.parent.send(ctx, jsonReq("", "POST", "/api/admin/stations",
		map[string]string{"name": "Soak FM", "url": s.station.base() + "/soak.m3u", "cover_url": s.station.base() + "/cover.png"}))
	if a.code != 201 {
		return fmt.Errorf("add the station: %d %v %s", a.code, a.err, a.body)
	}
	a = s.parent.send(ctx, jsonReq("", "POST", "/api/admin/podcasts", map[string]string{"url": s.station.base() + "/feed.xml"}))
	if a.code != 201 {
		return fmt.Errorf("add the podcast: %d %v %s", a.code, a.err, a.body)
	}
	return s.library.refresh(ctx, false)
}

// cardIDs are the cards of the household: the first ones get mappings at
// the start, the admin worker maps and unmaps the rest.
var cardIDs = []string{"0004921380", "0004921381", "0004921382", "0004921383", "0004921384", "0004921385",
	"0004921386", "0004921387", "A1B2C3D4", "0000000042"}

func (s *soak) setupCards(ctx context.Context, rng *rand.Rand) error {
	ids := s.library.baseIDs()
	for i, card := range cardIDs[:4] {
		m := map[string]any{"action": "folder", "folder_id": ids[i%len(ids)], "name": fmt.Sprintf("Karte %d", i)}
		if i == 3 {
			m = map[string]any{"action": "resume", "folder_id": ids[rng.IntN(len(ids))], "name": "Weiter"}
		}
		a := s.parent.send(ctx, jsonReq("", "PUT", "/api/admin/cards/"+card, m))
		if a.code != 200 {
			return fmt.Errorf("map card %s: %d %v %s", card, a.code, a.err, a.body)
		}
	}
	return nil
}
