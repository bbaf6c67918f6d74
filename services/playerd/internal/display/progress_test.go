package display

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// regionScreen keeps its own copy of what it was shown, whole frames and
// regions alike, and counts both.
type regionScreen struct {
	mu            sync.Mutex
	size          image.Point
	pix           *image.RGBA
	whole, region int
	areas         []image.Rectangle
}

func (s *regionScreen) Size() image.Point { return s.size }
func (s *regionScreen) Close() error      { return nil }

func (s *regionScreen) Show(f *image.RGBA) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.whole++
	s.pix = image.NewRGBA(f.Rect)
	copy(s.pix.Pix, f.Pix)
	return nil
}

func (s *regionScreen) ShowRegion(f *image.RGBA, r image.Rectangle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.region++
	s.areas = append(s.areas, r)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(s.pix.Pix[s.pix.PixOffset(r.Min.X, y):s.pix.PixOffset(r.Max.X, y)], f.Pix[f.PixOffset(r.Min.X, y):f.PixOffset(r.Max.X, y)])
	}
	return nil
}

// TestProgressRedrawIsExact: while a track plays, each second redraws the
// progress area alone, and the frame is then pixel for pixel the frame a
// whole redraw gives, as is what the screen got; on any other change the
// whole frame is drawn again.
func TestProgressRedrawIsExact(t *testing.T) {
	cases := []struct {
		size       image.Point
		lang       lang.Lang
		batteryLow bool
		dur        float64
		positions  []float64
	}{
		{image.Pt(800, 480), "de", false, 245, []float64{0, 1, 2, 59, 60, 61, 122, 244, 245}},
		{image.Pt(800, 480), "en", true, 3725, []float64{0, 1, 3599, 3600, 3601, 3724}},
		{image.Pt(1024, 600), "de", false, 30, []float64{0, 7, 8, 29, 30}},
		{image.Pt(320, 240), "de", true, 600, []float64{9, 10, 11, 599}},
		{image.Pt(800, 480), "de", false, 0, []float64{0, 1, 2}}, // no duration: a stream
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v_%s_low%v_%v", tc.size, tc.lang, tc.batteryLow, tc.dur), func(t *testing.T) {
			st := playingStatus()
			st.Duration, st.Position = tc.dur, tc.positions[0]
			p := newFakePlayer(st)
			scr := &regionScreen{size: tc.size}
			d, _ := newTestDisplay(t, p, func(o *Options) { o.Screen, o.Lang = scr, tc.lang })
			d.SetBatteryLow(tc.batteryLow)
			snap(t, d)
			for _, pos := range tc.positions[1:] {
				p.set(func(st *player.Status) { st.Position = pos + 0.5 })
				got := snap(t, d)
				want := image.NewRGBA(got.Rect)
				d.r.render(want, d.shown)
				if !bytes.Equal(got.Pix, want.Pix) {
					t.Fatalf("at %v s the frame differs from a whole redraw in %d pixels", pos, countDiff(got, want))
				}
				if !bytes.Equal(scr.pix.Pix, want.Pix) {
					t.Fatalf("at %v s the screen differs from a whole redraw in %d pixels", pos, countDiff(scr.pix, want))
				}
			}
			if scr.whole != 1 || scr.region != len(tc.positions)-1 {
				t.Errorf("%d whole frames and %d regions shown, want 1 and %d", scr.whole, scr.region, len(tc.positions)-1)
			}
			full := image.Rectangle{Max: tc.size}
			for _, a := range scr.areas {
				if a.Dx()*a.Dy()*10 > full.Dx()*full.Dy() {
					t.Errorf("region %v is more than a tenth of the screen", a)
				}
			}

			// Anything else that changes draws the whole frame.
			p.set(func(st *player.Status) { st.Volume += 5; st.Position++ })
			snap(t, d)
			if scr.whole != 2 {
				t.Errorf("a volume change showed %d whole frames, want 2", scr.whole)
			}
		})
	}
}

func countDiff(a, b *image.RGBA) int {
	n := 0
	for i := 0; i < len(a.Pix); i += 4 {
		if !bytes.Equal(a.Pix[i:i+4], b.Pix[i:i+4]) {
			n++
		}
	}
	return n
}

// BenchmarkPlayingSecond is the screen's work for each second of playing:
// the progress area redrawn and copied to a framebuffer ("progress"),
// against the whole frame drawn and copied ("whole", what every second
// cost before).
func BenchmarkPlayingSecond(b *testing.B) {
	p := newFakePlayer(playingStatus())
	d, _ := newTestDisplay(b, p, nil)
	snap(b, d)
	fb, err := newPixfmt(fbVarScreenInfo{XRes: 800, YRes: 480, BitsPerPixel: 16,
		Red: fbBitfield{Offset: 11, Length: 5}, Green: fbBitfield{Offset: 5, Length: 6}, Blue: fbBitfield{Length: 5}},
		fbFixScreenInfo{LineLength: 1600})
	if err != nil {
		b.Fatal(err)
	}
	mem := make([]byte, 1600*480)
	v := *d.shown
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			v.Playing.Pos = i % 200
			d.r.render(d.frame, &v)
			if err := fb.copy(mem, d.frame); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("progress", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			v.Playing.Pos = i % 200
			area := d.r.renderProgress(d.frame, &v)
			if err := fb.copyRect(mem, d.frame, area); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// followedPlayer is a fakePlayer that says when its status changed, as the
// player engine does, with a position that moves without an event, as the
// engine's does; it counts the screen's looks at it.
type followedPlayer struct {
	*fakePlayer
	looks   atomic.Int64
	cmu     sync.Mutex
	changed chan struct{}
}

func (p *followedPlayer) Status() player.Status {
	p.looks.Add(1)
	return p.fakePlayer.Status()
}

func (p *followedPlayer) Changed() <-chan struct{} {
	p.cmu.Lock()
	defer p.cmu.Unlock()
	return p.changed
}

func (p *followedPlayer) moveTo(position float64) {
	p.mu.Lock()
	p.st.Position = position
	p.mu.Unlock()
	p.cmu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.cmu.Unlock()
}

// TestClockFollowsThePlayer: with a player that says when its position
// reaches the next second, the screen does not wake every second by itself
// while a track plays (each wakeup of the process costs a box more than the
// redraw), and the player's next second redraws the progress.
func TestClockFollowsThePlayer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &followedPlayer{fakePlayer: newFakePlayer(playingStatus()), changed: make(chan struct{})}
		scr := &regionScreen{size: image.Pt(800, 480)}
		d, _ := newTestDisplay(t, p, func(o *Options) { o.Screen, o.Events, o.HomeEvery = scr, p.feed, time.Hour })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go d.Run(ctx)
		synctest.Wait()
		shown := func() (whole, region int) {
			scr.mu.Lock()
			defer scr.mu.Unlock()
			return scr.whole, scr.region
		}
		if whole, _ := shown(); whole != 1 {
			t.Fatalf("%d whole frames at start, want 1", whole)
		}

		looks := p.looks.Load()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := p.looks.Load() - looks; n != 0 {
			t.Errorf("the screen looked at the player %d times in 10 s of playing on its own", n)
		}

		p.moveTo(p.fakePlayer.Status().Position + 1)
		synctest.Wait()
		if whole, region := shown(); whole != 1 || region != 1 {
			t.Errorf("the player's next second showed %d whole frames and %d regions, want 1 and 1", whole, region)
		}
	})
}
