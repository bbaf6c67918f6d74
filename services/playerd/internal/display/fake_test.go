package display

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"image"
	"image/png"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// fakePlayer applies the few rules the screen relies on (volume clamped to
// max_volume, toggle, next/previous within the queue) and records commands.
// Each change is an event on its feed, as the player's feed publishes one.
type fakePlayer struct {
	mu   sync.Mutex
	st   player.Status
	feed *events.Bus
	cmds []player.Command
	vias []auth.Via // who each command came from
	err  error
}

func newFakePlayer(st player.Status) *fakePlayer {
	return &fakePlayer{st: st, feed: events.New(events.Config{})}
}

func (p *fakePlayer) Status() player.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

func (p *fakePlayer) set(f func(*player.Status)) {
	p.mu.Lock()
	f(&p.st)
	st := p.st
	p.mu.Unlock()
	if err := p.feed.Publish(events.KindState, st); err != nil {
		panic(err)
	}
}

func (p *fakePlayer) Do(ctx context.Context, c player.Command) (player.Status, error) {
	p.mu.Lock()
	p.cmds = append(p.cmds, c)
	p.vias = append(p.vias, auth.CallerFrom(ctx).Via)
	err := p.err
	p.mu.Unlock()
	if err != nil {
		return player.Status{}, err
	}
	p.set(func(st *player.Status) {
		switch c.Action {
		case player.ActVolumeDelta:
			st.Volume = min(max(st.Volume+int(*c.Value), 0), st.MaxVolume)
		case player.ActToggle:
			if st.State == player.Playing {
				st.State = player.Paused
			} else {
				st.State = player.Playing
			}
		case player.ActNext:
			st.Index = min(st.Index+1, len(st.Queue)-1)
		case player.ActPrevious:
			st.Index = max(st.Index-1, 0)
		case player.ActShuffle:
			st.Shuffle = *c.On
		case player.ActRepeat:
			st.Repeat = c.Word
		case player.ActFolder:
			id := c.FolderID
			st.FolderID, st.Folder, st.State, st.Index = &id, &id, player.Playing, 0
			st.Queue = []player.QueueItem{{ID: id + "-1", Title: "Kapitel 1"}}
		}
	})
	return p.Status(), nil
}

func (p *fakePlayer) commands() []player.Command {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]player.Command(nil), p.cmds...)
}

func str(s string) *string { return &s }

func idleStatus() player.Status {
	return player.Status{State: player.Stopped, Index: -1, Volume: 30, MaxVolume: 50}
}

func playingStatus() player.Status {
	return player.Status{
		State:    player.Playing,
		FolderID: str("f-bibi"),
		Folder:   str("Bibi Blocksberg – Folge 12: Die Überraschung"),
		Cover:    str("/api/cover/f-bibi"),
		Queue: []player.QueueItem{
			{ID: "t1", Title: "Kapitel 1"}, {ID: "t2", Title: "Kapitel 2: Große Aufregung im Hühnerstall"},
			{ID: "t3", Title: "Kapitel 3"},
		},
		Index: 1, Position: 83.4, Duration: 245, Volume: 20, MaxVolume: 50,
	}
}

// testHome has two categories; the first holds more tiles than one page.
func testHome() home.Home {
	var items []home.Item
	titles := []string{"Bibi Blocksberg", "Benjamin Blümchen", "Die drei ???", "Pumuckl", "Räuber Hotzenplotz",
		"Sams", "Das kleine Gespenst", "Jim Knopf", "Die Schule der magischen Tiere", "Ötzi"}
	for i, t := range titles {
		id := fmt.Sprintf("f%02d", i)
		it := home.Item{ID: id, Kind: "local-folder", Title: t, Subtitle: "12 Titel",
			Command: player.Command{Action: player.ActFolder, FolderID: id}}
		if i%3 != 2 { // every third has no cover: placeholder tile
			it.Cover = str("/api/cover/" + id)
		}
		items = append(items, it)
	}
	return home.Home{Categories: []home.Category{
		{ID: "audiobooks", Labels: home.Labels{"de": "Hörbücher", "en": "Audiobooks"},
			Rows: []home.Row{{ID: "local-library", Items: items[:6]}, {ID: "more", Items: items[6:]}}},
		{ID: "music", Labels: home.Labels{"de": "Musik", "en": "Music"},
			Rows: []home.Row{{ID: "local-library", Items: items[2:4]}}},
		{ID: "radio", Labels: home.Labels{"de": "Radio"}},
	}}
}

// testCovers draws a distinct deterministic picture per id. Encoded covers
// are kept across tests: encoding is slow under the race detector.
func testCovers(t testing.TB) CoverSource {
	return coverFunc(func(id string) ([]byte, string, error) {
		if b, ok := coverBytes.Load(id); ok {
			return b.([]byte), "image/png", nil
		}
		f := fnv.New32a()
		f.Write([]byte(id))
		h := uint8(f.Sum32() % 251)
		img := image.NewRGBA(image.Rect(0, 0, 300, 240))
		for y := 0; y < 240; y++ {
			for x := 0; x < 300; x++ {
				i := img.PixOffset(x, y)
				img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(x*255/300)+h, uint8(y)^h, 255-h, 0xff
			}
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		coverBytes.Store(id, b.Bytes())
		return b.Bytes(), "image/png", nil
	})
}

var coverBytes sync.Map

// fakeClock is a settable time source.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestDisplay(t testing.TB, p Player, mod func(*Options)) (*Display, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)}
	h := testHome()
	o := Options{
		Player: p,
		Events: feedOf(p),
		Home:   HomeFunc(func(context.Context) (home.Home, error) { return h, nil }),
		Covers: testCovers(t),
		Now:    clk.now,
	}
	// The box's board tells the feed (box.New wires it so); the fake
	// player's feed stands in for it.
	if fp, ok := p.(*fakePlayer); ok {
		o.Messages = message.NewBoard(clk.now, func(e message.Event) {
			if err := fp.feed.Publish(events.KindMessage, e); err != nil {
				t.Error(err)
			}
		})
	}
	if mod != nil {
		mod(&o)
	}
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return d, clk
}

// feedOf is the fake player's feed; nil for other players.
func feedOf(p Player) Feed {
	if fp, ok := p.(*fakePlayer); ok {
		return fp.feed
	}
	return nil
}

type coverFunc func(id string) ([]byte, string, error)

func (f coverFunc) Cover(id string) ([]byte, string, error) { return f(id) }
