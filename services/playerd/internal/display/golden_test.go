package display

import (
	"context"
	"flag"
	"image"
	"image/draw"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/display/displaytest"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

var update = flag.Bool("update", false, "rewrite the golden images in testdata/")

func TestGoldenScreens(t *testing.T) {
	cases := []struct {
		name  string
		st    player.Status
		setup func(t *testing.T, d *Display)
	}{
		{name: "home", st: idleStatus()},
		{name: "home_page2", st: idleStatus(), setup: func(t *testing.T, d *Display) {
			tapAt(t, d, "next page", actPage)
		}},
		{name: "home_music_en", st: playingStatus(), setup: func(t *testing.T, d *Display) {
			d.o.Lang = "en"
			tapAt(t, d, "home button", actGoHome)
			tapTab(t, d, 1)
		}},
		{name: "playing", st: playingStatus()},
		{name: "paused_battery_low", st: func() player.Status {
			st := playingStatus()
			st.State = player.Paused
			return st
		}(), setup: func(t *testing.T, d *Display) {
			d.SetBatteryLow(true)
			tapAt(t, d, "now playing button", actGoPlaying)
		}},
		{name: "home_battery_low", st: idleStatus(), setup: func(t *testing.T, d *Display) { d.SetBatteryLow(true) }},
		{name: "playing_shuffle_repeat_track", st: func() player.Status {
			st := playingStatus()
			st.Shuffle, st.Repeat, st.Mode = true, player.RepeatTrack, player.ModeShuffle
			return st
		}()},
		{name: "playing_sleep_timer", st: playingStatus(), setup: func(t *testing.T, d *Display) {
			d.o.Restrictions = sleepLeft(12 * 60)
		}},
		{name: "message", st: playingStatus(), setup: func(t *testing.T, d *Display) {
			showMessage(t, d, "Gute Nacht!", "Zähneputzen nicht vergessen – in fünf Minuten geht das Licht aus. Schlaf schön, süße Träume!", 8000)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := newTestDisplay(t, newFakePlayer(tc.st), nil)
			snap(t, d) // first frame, so taps have targets
			if tc.setup != nil {
				tc.setup(t, d)
			}
			checkGolden(t, tc.name, snap(t, d))
		})
	}
}

func snap(t testing.TB, d *Display) *image.RGBA {
	t.Helper()
	img, err := d.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// tapAt taps the centre of the first target of the given kind on screen.
func tapAt(t *testing.T, d *Display, what string, kind actionKind) {
	t.Helper()
	tapWhere(t, d, what, func(a action) bool { return a.kind == kind })
}

func tapTab(t *testing.T, d *Display, n int) {
	t.Helper()
	tapWhere(t, d, "tab", func(a action) bool { return a.kind == actTab && a.n == n })
}

func tapWhere(t *testing.T, d *Display, what string, match func(action) bool) image.Point {
	t.Helper()
	snap(t, d)
	d.rmu.Lock()
	var p image.Point
	found := false
	for _, tg := range d.targets {
		if match(tg.act) {
			p, found = tg.r.Min.Add(tg.r.Max).Div(2), true
			break
		}
	}
	d.rmu.Unlock()
	if !found {
		t.Fatalf("no %s on screen", what)
	}
	if err := d.Tap(context.Background(), p); err != nil {
		t.Fatalf("tap %s at %v: %v", what, p, err)
	}
	return p
}

func showMessage(t testing.TB, d *Display, title, msg string, ms int64) Message {
	t.Helper()
	m, err := d.ShowMessage(MessageRequest{Title: &title, Message: &msg, DurationMS: &ms})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func checkGolden(t *testing.T, name string, got *image.RGBA) {
	t.Helper()
	displaytest.Golden(t, filepath.Join("testdata", name+".png"), got, *update)
}

func diffPixels(a, b image.Image, r image.Rectangle) int { return displaytest.DiffPixels(a, b, r) }

// BenchmarkRender measures one full 800×480 frame: the now-playing screen
// with its cover and the message overlay on top (covers come from the
// cache, as on every redraw after the first).
func BenchmarkRender(b *testing.B) {
	for _, bc := range []struct {
		name string
		st   player.Status
		msg  bool
	}{{"home", idleStatus(), false}, {"playing+message", playingStatus(), true}} {
		b.Run(bc.name, func(b *testing.B) {
			d, _ := newTestDisplay(b, newFakePlayer(bc.st), nil)
			if bc.msg {
				showMessage(b, d, "Gute Nacht!", "Zähneputzen nicht vergessen – in fünf Minuten geht das Licht aus.", 30000)
			}
			snap(b, d)
			v := *d.shown
			b.ResetTimer()
			for range b.N {
				d.r.render(d.frame, &v)
			}
		})
	}
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok {
		return r
	}
	r := image.NewRGBA(img.Bounds())
	draw.Draw(r, r.Rect, img, r.Rect.Min, draw.Src)
	return r
}

func absDiff(a, b uint8) uint8 {
	if a > b {
		return a - b
	}
	return b - a
}
