package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// model is what the parent has saved, as last acknowledged: one snapshot
// per domain (settings, parental rules, cards, stations, podcasts, the
// navigation, the input wiring, uploads). After every kill each domain
// must read back exactly so, except the one a change in flight touched,
// which may read either way.
type model struct {
	s    *soak
	mu   sync.Mutex
	want map[string]string // domain -> canonical JSON
	// pending is the parent's change that has been sent and not yet
	// settled (its answer read and the domains read back).
	pending *change
	nextID  int
	journal *os.File // changes.log: every change and how it ended, for looking into a finding
	// sent hears of each change as it is sent, for a kill aimed at one.
	sent chan struct{}
}

// change is one change of the parent's.
type change struct {
	id      int
	what    string
	domains []string
	acked   bool
	// applied tells whether the snapshots show the change (sent values
	// present, a deleted thing gone).
	applied func(snap map[string]any) bool
}

// domains and how each is read back: through the API, and the uploads
// from the media directory itself.
var domains = []string{"settings", "parental", "cards", "stations", "podcasts", "navigation", "input", "uploads"}

func newModel(s *soak) *model {
	f, _ := os.Create(filepath.Join(s.cfg.out, "changes.log"))
	return &model{s: s, want: map[string]string{}, journal: f, sent: make(chan struct{}, 1)}
}

func (m *model) note(format string, a ...any) {
	if m.journal != nil {
		fmt.Fprintf(m.journal, "%s life %d: %s\n", time.Now().UTC().Format("15:04:05.000"), m.s.gate.life.Load(), fmt.Sprintf(format, a...))
	}
}

func (m *model) load(ctx context.Context) error {
	for _, d := range domains {
		snap, err := m.fetch(ctx, d, false)
		if err != nil {
			return err
		}
		m.want[d] = canonical(snap)
	}
	return nil
}

// fetch reads a domain as it is now.
func (m *model) fetch(ctx context.Context, d string, gated bool) (any, error) {
	path := map[string]string{"settings": "/api/admin/settings", "parental": "/api/admin/parental", "cards": "/api/admin/cards",
		"stations": "/api/admin/stations", "podcasts": "/api/admin/podcasts", "navigation": "/api/admin/navigation", "input": "/api/admin/input"}[d]
	if d == "uploads" {
		return uploadsOnDisk(m.s.box.media)
	}
	a, ok := m.s.parent.fetch(ctx, jsonReq("GET "+path, "GET", path, nil, 200), gated)
	if !ok {
		return nil, fmt.Errorf("GET %s: %d %v", path, a.code, a.err)
	}
	var v any
	if err := a.json(&v); err != nil {
		return nil, err
	}
	switch d {
	case "stations":
		return v.(map[string]any)["stations"], nil
	case "input":
		return v.(map[string]any)["wiring"], nil // the devices seen come and go
	case "podcasts":
		// What the parent saved; episodes and refresh times are the feed's.
		var out []any
		for _, p := range asList(v.(map[string]any)["podcasts"]) {
			pm := p.(map[string]any)
			out = append(out, map[string]any{"id": pm["id"], "url": pm["url"], "name": pm["name"]})
		}
		return out, nil
	}
	return v, nil
}

// uploadsOnDisk is the upload folders ("Soak …" in the media root) and
// their files with sizes; hidden files (an upload in progress) are left out.
func uploadsOnDisk(media string) (any, error) {
	entries, err := os.ReadDir(media)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "Soak ") {
			continue
		}
		files := map[string]any{}
		inner, err := os.ReadDir(filepath.Join(media, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range inner {
			if strings.HasPrefix(f.Name(), ".") {
				continue
			}
			if info, err := f.Info(); err == nil {
				files[f.Name()] = float64(info.Size())
			}
		}
		out[e.Name()] = files
	}
	return out, nil
}

// hiddenInUploads counts the hidden files in the upload folders: an upload's
// temporaries, which only an upload in progress may have.
func hiddenInUploads(media string) int {
	n := 0
	entries, _ := os.ReadDir(media)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "Soak ") {
			continue
		}
		inner, _ := os.ReadDir(filepath.Join(media, e.Name()))
		for _, f := range inner {
			if strings.HasPrefix(f.Name(), ".") {
				n++
			}
		}
	}
	return n
}

func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// begin registers a change about to be sent.
func (m *model) begin(c *change) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	c.id = m.nextID
	m.pending = c
	m.note("#%d sent: %s", c.id, c.what)
	select {
	case m.sent <- struct{}{}:
	default:
	}
	return c.id
}

// settle reads back the domains of change id after its answer: acked, the
// change must show; refused, nothing may have changed. A kill in between
// leaves it to the restart's check.
func (m *model) settle(ctx context.Context, id int, acked bool) {
	m.mu.Lock()
	c := m.pending
	if c == nil || c.id != id {
		m.mu.Unlock()
		return // the restart has settled it
	}
	c.acked = acked
	m.mu.Unlock()
	snaps := map[string]any{}
	for _, d := range c.domains {
		snap, err := m.fetch(ctx, d, true)
		if err != nil {
			return // a kill: the restart settles it
		}
		snaps[d] = snap
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil || m.pending.id != id {
		return
	}
	life := int(m.s.gate.life.Load())
	for _, d := range c.domains {
		if !acked && canonical(snaps[d]) != m.want[d] {
			m.s.rec.violate(life, "refused-changed", "%s was refused but changed %s: %.300s", c.what, d, canonical(snaps[d]))
		}
		m.want[d] = canonical(snaps[d])
	}
	m.note("#%d settled: acknowledged %v", id, acked)
	if acked && !c.applied(snaps) {
		m.s.rec.violate(life, "not-applied", "%s was acknowledged, but reading back does not show it: %.300s", c.what, canonical(snaps))
	}
	m.pending = nil
}

// verify is the check after a restart: every domain as acknowledged,
// a change in flight either way, an acknowledged one not yet read back
// present. It runs while the restart holds the gate.
func (m *model) verify(ctx context.Context, life int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.pending
	snaps := map[string]any{}
	for _, d := range domains {
		snap, err := m.fetch(ctx, d, false)
		if err != nil {
			m.s.rec.violate(life, "lost", "reading back %s after the restart: %v", d, err)
			continue
		}
		snaps[d] = snap
	}
	touched := map[string]bool{}
	if c != nil {
		for _, d := range c.domains {
			touched[d] = true
		}
		applied := c.applied(snaps)
		unchanged := true
		for _, d := range c.domains {
			if s, ok := snaps[d]; ok && canonical(s) != m.want[d] {
				unchanged = false
			}
		}
		switch {
		case c.acked && !applied:
			m.s.rec.violate(life, "lost", "%s was acknowledged before the kill and is gone after it: %s", c.what, diffDomains(m.want, snaps, c.domains))
		case !c.acked && !applied && !unchanged:
			m.s.rec.violate(life, "torn", "%s was in flight at the kill and is half there: %s", c.what, diffDomains(m.want, snaps, c.domains))
		}
		m.s.rec.count("changes in flight at a kill", 1)
		m.note("#%d at the kill (acknowledged %v): applied %v, unchanged %v", c.id, c.acked, applied, unchanged)
	}
	for _, d := range domains {
		s, ok := snaps[d]
		if !ok {
			continue
		}
		if !touched[d] && canonical(s) != m.want[d] {
			m.s.rec.violate(life, "lost", "%s differs after the kill: %s", d, diffDomains(m.want, snaps, []string{d}))
		}
		m.want[d] = canonical(s)
	}
	m.pending = nil
}

// diffDomains says what differs, domain by domain, field by field.
func diffDomains(want map[string]string, snaps map[string]any, ds []string) string {
	var out []string
	for _, d := range ds {
		var w any
		_ = json.Unmarshal([]byte(want[d]), &w)
		jsonDiff(w, asJSON(snaps[d]), d, &out)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// jsonDiff lists the paths where got differs from want.
func jsonDiff(want, got any, path string, out *[]string) {
	wm, ok1 := want.(map[string]any)
	gm, ok2 := got.(map[string]any)
	if ok1 && ok2 {
		for k, v := range wm {
			jsonDiff(v, gm[k], path+"."+k, out)
		}
		for k, v := range gm {
			if _, ok := wm[k]; !ok {
				*out = append(*out, fmt.Sprintf("%s.%s: want nothing, got %s", path, k, canonical(v)))
			}
		}
		return
	}
	if canonical(want) != canonical(got) {
		*out = append(*out, fmt.Sprintf("%s: want %s, got %s", path, canonical(want), canonical(got)))
	}
}

// contains tells whether every field of sent is in got with its value:
// objects field by field, lists element by element, numbers as numbers.
func contains(got, sent any) bool {
	switch s := sent.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range s {
			if !contains(g[k], v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(s) {
			return false
		}
		for i := range s {
			if !contains(g[i], s[i]) {
				return false
			}
		}
		return true
	default:
		return canonical(got) == canonical(sent)
	}
}

// asJSON turns a Go value into what decoding its JSON gives, for contains.
func asJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// cardMapping is a card's mapping as last saved.
func (m *model) cardMapping(id string) (map[string]any, bool) {
	m.mu.Lock()
	raw := m.want["cards"]
	m.mu.Unlock()
	var doc struct {
		Cards map[string]map[string]any `json:"cards"`
	}
	if json.Unmarshal([]byte(raw), &doc) != nil {
		return nil, false
	}
	c, ok := doc.Cards[id]
	return c, ok
}
