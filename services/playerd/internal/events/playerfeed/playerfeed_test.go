package playerfeed

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

func sp(s string) *string { return &s }

var at = time.Date(2026, 3, 1, 18, 0, 0, 0, time.UTC)

func loaded() player.Status {
	return player.Status{
		State: player.Paused, FolderID: sp("f1"), Folder: sp("Folge 1"), Cover: sp("/api/cover/f1"),
		Queue: []player.QueueItem{{ID: "a", Title: "A", Duration: 60}, {ID: "b", Title: "B", Duration: 90}},
		Index: 0, Position: 12.5, Duration: 60, Volume: 30, MaxVolume: 80, Jumps: 1,
	}
}

func kinds(cs []Change) []events.Kind {
	var out []events.Kind
	for _, c := range cs {
		out = append(out, c.Kind)
	}
	return out
}

func TestChanges(t *testing.T) {
	base := loaded()
	cases := []struct {
		name string
		edit func(*player.Status)
		want []events.Kind
	}{
		{"nothing", func(*player.Status) {}, nil},
		{"the position moved by playing", func(s *player.Status) { s.Position = 13.5 }, nil},
		{"play", func(s *player.Status) { s.State = player.Playing }, []events.Kind{events.KindState}},
		{"an error text", func(s *player.Status) { s.Error = "audio output: gone" }, []events.Kind{events.KindState}},
		{"volume", func(s *player.Status) { s.Volume = 35 }, []events.Kind{events.KindVolume}},
		{"max volume", func(s *player.Status) { s.MaxVolume = 60 }, []events.Kind{events.KindVolume}},
		{"seek", func(s *player.Status) { s.Position = 40; s.Jumps++ }, []events.Kind{events.KindSeek}},
		{"stop", func(s *player.Status) { s.State = player.Stopped; s.Position = 0 }, []events.Kind{events.KindState}},
		{"next track", func(s *player.Status) { s.Index = 1; s.Duration = 90; s.Position = 0; s.Jumps++ }, []events.Kind{events.KindTrack}},
		{"duration known later", func(s *player.Status) { s.Duration = 61 }, []events.Kind{events.KindTrack}},
		{"another folder, playing", func(s *player.Status) {
			s.FolderID, s.Folder, s.Cover = sp("f2"), sp("Folge 2"), nil
			s.Queue = []player.QueueItem{{ID: "c", Title: "C"}}
			s.State, s.Position, s.Jumps = player.Playing, 0, 2
		}, []events.Kind{events.KindQueue, events.KindTrack, events.KindState}},
		{"the same folder again, from its start", func(s *player.Status) {
			s.Queue = append([]player.QueueItem(nil), s.Queue...) // a new slice, equal items
			s.Position, s.Jumps = 0, 2
		}, []events.Kind{events.KindSeek}},
		{"announcement", func(s *player.Status) { s.Speaking = true }, []events.Kind{events.KindSpeech}},
		{"stream title", func(s *player.Status) { s.NowPlaying = sp("Radio") }, []events.Kind{events.KindNowPlaying}},
		{"shuffle", func(s *player.Status) { s.Shuffle = true }, []events.Kind{events.KindModes}},
		{"repeat", func(s *player.Status) { s.Repeat = player.RepeatTrack }, []events.Kind{events.KindModes}},
		{"a folder's mode", func(s *player.Status) { s.Mode = player.ModeSingle }, []events.Kind{events.KindModes}},
	}
	for _, c := range cases {
		cur := loaded()
		c.edit(&cur)
		got := Changes(base, cur, at)
		if !equalKinds(kinds(got), c.want) {
			t.Errorf("%s: %v, want %v", c.name, kinds(got), c.want)
		}
	}
}

func equalKinds(a, b []events.Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The payloads as clients read them (docs/api.md).
func TestPayloads(t *testing.T) {
	prev := player.Status{State: player.Stopped, Queue: []player.QueueItem{}, Index: -1, Volume: 30, MaxVolume: 80}
	cur := loaded()
	cur.State = player.Playing
	cur.Position = math.NaN() // never makes an event unencodable
	want := map[events.Kind]string{
		events.KindQueue: `{"folder_id":"f1","folder":"Folge 1","cover":"/api/cover/f1","queue":[{"id":"a","title":"A","duration":60,"provider":"","resume_policy":""},{"id":"b","title":"B","duration":90,"provider":"","resume_policy":""}]}`,
		events.KindTrack: `{"index":0,"item":{"id":"a","title":"A","duration":60,"provider":"","resume_policy":""},"position":0,"duration":60,"at":"2026-03-01T18:00:00Z"}`,
		events.KindState: `{"state":"playing","position":0,"at":"2026-03-01T18:00:00Z"}`,
	}
	got := Changes(prev, cur, at)
	if len(got) != len(want) {
		t.Fatalf("changes %v", kinds(got))
	}
	for _, c := range got {
		data, err := json.Marshal(c.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != want[c.Kind] {
			t.Errorf("%s:\n got %s\nwant %s", c.Kind, data, want[c.Kind])
		}
	}
	// Unloading: the queue is empty, not null; no track is current.
	got = Changes(cur, prev, at)
	for _, c := range got {
		data, _ := json.Marshal(c.Payload)
		switch c.Kind {
		case events.KindQueue:
			if string(data) != `{"folder_id":null,"folder":null,"cover":null,"queue":[]}` {
				t.Errorf("unloaded queue: %s", data)
			}
		case events.KindTrack:
			if string(data) != `{"index":-1,"item":null,"position":0,"duration":0,"at":"2026-03-01T18:00:00Z"}` {
				t.Errorf("no track: %s", data)
			}
		}
	}
}

// fakePlayer is a Source whose snapshots a test sets.
type fakePlayer struct {
	mu      sync.Mutex
	st      player.Status
	changed chan struct{}
}

func (p *fakePlayer) Status() player.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

func (p *fakePlayer) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

func (p *fakePlayer) set(f func(*player.Status)) {
	p.mu.Lock()
	f(&p.st)
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// Run publishes what changed after New, not the state at New.
func TestRunPublishesChanges(t *testing.T) {
	src := &fakePlayer{st: loaded(), changed: make(chan struct{})}
	bus := events.New(events.Config{FirstID: 1})
	sub := bus.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	feed := New(src, bus, func() time.Time { return at }, func(err error) { t.Error(err) })
	go func() {
		defer close(done)
		feed.Run(ctx)
	}()
	// Wait on the bus for each event, never on time.
	next := func() *events.Event {
		t.Helper()
		for {
			ready := sub.Ready()
			ev, err := sub.Next()
			if err != nil {
				t.Fatal(err)
			}
			if ev != nil {
				return ev
			}
			select {
			case <-ready:
			case <-time.After(10 * time.Second):
				t.Fatal("no event")
			}
		}
	}
	src.set(func(s *player.Status) { s.Volume = 50 })
	if ev := next(); ev.Kind != events.KindVolume || string(ev.Data) != `{"volume":50,"max_volume":80}` {
		t.Errorf("first event %s %s", ev.Kind, ev.Data)
	}
	src.set(func(s *player.Status) { s.Position = 14 }) // playing on: nothing
	src.set(func(s *player.Status) { s.State = player.Playing; s.Position = 15 })
	if ev := next(); ev.Kind != events.KindState || string(ev.Data) != `{"state":"playing","position":15,"at":"2026-03-01T18:00:00Z"}` {
		t.Errorf("second event %s %s", ev.Kind, ev.Data)
	}
	cancel()
	<-done
}
