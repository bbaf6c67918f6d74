package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// uploadFolder is the media folder the uploads go to.
const uploadFolder = "Powercut"

// queueState is the player's queue as the status shows it: the folder, the
// track and the position. any: a folder that was playing (its position
// moves, and the saver writes it every few seconds): any track and
// position in it.
type queueState struct {
	Folder string
	Index  int
	Pos    float64
	any    bool
}

func (q queueState) String() string {
	switch {
	case q.Folder == "":
		return "no queue"
	case q.any:
		return fmt.Sprintf("%.8s… playing", q.Folder)
	}
	return fmt.Sprintf("%.8s… #%d at %.2f s", q.Folder, q.Index, q.Pos)
}

func sameQueue(want, got queueState) bool {
	if want.Folder != got.Folder {
		return false
	}
	return want.any || want.Index == got.Index && math.Abs(want.Pos-got.Pos) <= 0.15
}

type card struct{ Folder, Name string }

func (c card) String() string { return fmt.Sprintf("%.8s…/%s", c.Folder, c.Name) }

// model is what the test asked the box to remember.
type model struct {
	volume  register[int]
	queue   register[queueState]
	idle    register[int] // settings: display.idle_off_minutes
	cards   set[card]
	uploads set[float64] // by file name: the duration the library shows

	folders   []folder // local folders to play (not the uploads')
	uploadID  string
	startup   int // the settings' startup volume: a saved volume below it comes back as it was
	idleN     int
	cardN     int
	uploadN   int
	manifest  *os.File // name, SHA-256 and size of every upload sent
	firstSeen bool
}

type folder struct {
	ID       string
	Duration float64 // of the first track
}

func newModel(manifest *os.File) *model {
	return &model{
		volume:   register[int]{name: "volume", match: func(a, b int) bool { return a == b }},
		queue:    register[queueState]{name: "queue", match: sameQueue},
		idle:     register[int]{name: "settings display.idle_off_minutes", match: func(a, b int) bool { return a == b }},
		cards:    set[card]{name: "cards", match: func(a, b card) bool { return a == b }},
		uploads:  set[float64]{name: "uploads", match: func(a, b float64) bool { return math.Abs(a-b) <= 0.05 }},
		manifest: manifest,
	}
}

// tally counts one stream's requests in a cycle.
type tally struct{ sent, acked int }

// streams sends commands, settings, card mappings and uploads at the box
// until ctx ends or the power is cut (cut set). A request that fails
// before the cut is a failure of the box; after it, the expected end.
type streams struct {
	b    *box
	m    *model
	cut  *atomic.Bool
	seed uint64

	mu     sync.Mutex
	errs   []error
	counts map[string]*tally
}

func (s *streams) run(ctx context.Context) {
	s.counts = map[string]*tally{}
	var wg sync.WaitGroup
	for i, f := range []struct {
		name string
		run  func(context.Context, *rand.Rand, *http.Client, *tally) error
	}{
		{"commands", s.commands},
		{"settings", s.settings},
		{"cards", s.cardMappings},
		{"uploads", s.uploads},
	} {
		t := &tally{}
		s.counts[f.name] = t
		rng := rand.New(rand.NewPCG(s.seed, uint64(i)))
		c := &http.Client{Timeout: 120 * time.Second, Transport: &http.Transport{}}
		wg.Go(func() {
			if err := f.run(ctx, rng, c, t); err != nil && !s.cut.Load() && ctx.Err() == nil {
				s.mu.Lock()
				s.errs = append(s.errs, fmt.Errorf("%s: %w (before the cut)", f.name, err))
				s.mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// pace is the pause between two requests of one stream: a steady stream,
// not a flood.
func pace(ctx context.Context, rng *rand.Rand) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(rng.IntN(250)) * time.Millisecond):
		return nil
	}
}

// status is what the checks read of the player status.
type status struct {
	State    string  `json:"state"`
	FolderID *string `json:"folder_id"`
	Index    int     `json:"index"`
	Position float64 `json:"position"`
	Volume   int     `json:"volume"`
}

func (st status) queue() queueState {
	if st.FolderID == nil || *st.FolderID == "" {
		return queueState{Index: -1}
	}
	return queueState{Folder: *st.FolderID, Index: st.Index, Pos: st.Position}
}

func (s *streams) command(ctx context.Context, c *http.Client, body map[string]any) (status, error) {
	var st status
	err := s.b.call(ctx, c, http.MethodPost, "/api/command", "application/json", jsonBody(body), &st)
	return st, err
}

// commands plays a folder, pauses it, then seeks (paused: the position
// stays where it was put) and sets the volume, by turns. Each is an
// urgent change of the player state: on disk within a second.
func (s *streams) commands(ctx context.Context, rng *rand.Rand, c *http.Client, t *tally) error {
	m := s.m
	f := m.folders[rng.IntN(len(m.folders))]
	q := m.queue.send(queueState{Folder: f.ID, any: true})
	t.sent++
	if _, err := s.command(ctx, c, map[string]any{"action": "folder", "folder_id": f.ID}); err != nil {
		return fmt.Errorf("folder: %w", err)
	}
	q.acked = time.Now()
	t.acked++
	q = m.queue.send(queueState{Folder: f.ID, any: true}) // where the pause lands is known from its answer
	t.sent++
	st, err := s.command(ctx, c, map[string]any{"action": "pause"})
	if err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	q.value, q.acked = st.queue(), time.Now()
	t.acked++
	vol := st.Volume
	for turn := 0; ; turn++ {
		if err := pace(ctx, rng); err != nil {
			return nil
		}
		if turn%2 == 0 && m.startup > 2 {
			v := 1 + rng.IntN(min(m.startup-1, 60))
			if v == vol {
				v = 1 + v%(m.startup-1)
			}
			ch := m.volume.send(v)
			t.sent++
			st, err := s.command(ctx, c, map[string]any{"action": "volume", "value": v})
			if err != nil {
				return fmt.Errorf("volume %d: %w", v, err)
			}
			if st.Volume != v {
				return fmt.Errorf("volume %d: the box answered volume %d", v, st.Volume)
			}
			ch.acked, vol = time.Now(), v
			t.acked++
			continue
		}
		pos := math.Round((0.5+rng.Float64()*math.Max(0, f.Duration-2))*10) / 10
		ch := m.queue.send(queueState{Folder: f.ID, Index: 0, Pos: pos})
		t.sent++
		st, err := s.command(ctx, c, map[string]any{"action": "seek", "value": pos})
		if err != nil {
			return fmt.Errorf("seek %.1f: %w", pos, err)
		}
		if st.State != "paused" {
			return fmt.Errorf("seek %.1f while paused: the box is %s", pos, st.State)
		}
		ch.value, ch.acked = st.queue(), time.Now()
		t.acked++
	}
}

// settings changes one setting, a new value each time.
func (s *streams) settings(ctx context.Context, rng *rand.Rand, c *http.Client, t *tally) error {
	m := s.m
	for {
		m.idleN++
		v := 1 + m.idleN%1440
		ch := m.idle.send(v)
		t.sent++
		body := map[string]any{"display": map[string]any{"idle_off_minutes": v}}
		if err := s.b.call(ctx, c, http.MethodPut, "/api/admin/settings", "application/json", jsonBody(body), nil); err != nil {
			return fmt.Errorf("idle_off_minutes %d: %w", v, err)
		}
		ch.acked = time.Now()
		t.acked++
		if err := pace(ctx, rng); err != nil {
			return nil
		}
	}
}

// maxCards stays below the box's limit of 1000 mappings.
const maxCards = 900

// cardMappings maps new cards to folders.
func (s *streams) cardMappings(ctx context.Context, rng *rand.Rand, c *http.Client, t *tally) error {
	m := s.m
	for m.cards.size() < maxCards {
		m.cardN++
		id := fmt.Sprintf("%010d", 4200000000+m.cardN)
		v := card{Folder: m.folders[rng.IntN(len(m.folders))].ID, Name: fmt.Sprintf("Karte %d", m.cardN)}
		ch := m.cards.send(id, v)
		t.sent++
		body := map[string]any{"action": "folder", "folder_id": v.Folder, "name": v.Name}
		if err := s.b.call(ctx, c, http.MethodPut, "/api/admin/cards/"+id, "application/json", jsonBody(body), nil); err != nil {
			return fmt.Errorf("card %s: %w", id, err)
		}
		ch.acked = time.Now()
		t.acked++
		if err := pace(ctx, rng); err != nil {
			return nil
		}
	}
	<-ctx.Done()
	return nil
}

// uploads sends WAV files of 5 to 30 s (160 to 960 KB) of noise, one per
// request.
func (s *streams) uploads(ctx context.Context, rng *rand.Rand, c *http.Client, t *tally) error {
	m := s.m
	for {
		m.uploadN++
		name := fmt.Sprintf("pc-%04d.wav", m.uploadN)
		secs := 5 + rng.IntN(26)
		data := wav(secs, rng)
		sum := sha256.Sum256(data)
		fmt.Fprintf(m.manifest, "%s\t%s\t%d\n", name, hex.EncodeToString(sum[:]), len(data))
		ch := m.uploads.send(name, float64(secs))
		t.sent++
		if err := s.b.upload(ctx, c, m.uploadID, name, data); err != nil {
			return fmt.Errorf("upload %s: %w", name, err)
		}
		ch.acked = time.Now()
		t.acked++
		if err := pace(ctx, rng); err != nil {
			return nil
		}
	}
}

const wavRate = 16000

// wav is secs seconds of 16-bit mono noise as a WAV file.
func wav(secs int, rng *rand.Rand) []byte {
	n := secs * wavRate * 2
	b := make([]byte, 44+n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], wavRate)
	binary.LittleEndian.PutUint32(b[28:], wavRate*2)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(n))
	for i := 44; i+1 < len(b); i += 2 {
		binary.LittleEndian.PutUint16(b[i:], uint16(int16(rng.IntN(8000)-4000)))
	}
	return b
}

// cut decides for every change sent since the last boot whether it had to
// survive a cut at t; it returns how many were acknowledged and how many of
// those had to.
func (m *model) cut(t time.Time, margin time.Duration) (must, acked int) {
	for _, f := range []func() (int, int){
		func() (int, int) { return cutAt(m.volume.pending, t, margin) },
		func() (int, int) { return cutAt(m.queue.pending, t, margin) },
		func() (int, int) { return cutAt(m.idle.pending, t, margin) },
		func() (int, int) { return cutAt(m.cards.pending, t, margin) },
		func() (int, int) { return cutAt(m.uploads.pending, t, margin) },
	} {
		mu, a := f()
		must += mu
		acked += a
	}
	return must, acked
}
