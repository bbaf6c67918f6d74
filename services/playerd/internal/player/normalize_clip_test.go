package player

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/loudness"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

func sineClip(seconds, amp float64) [][2]float64 {
	c := make([][2]float64, int(seconds*output.ClipRate))
	for i := range c {
		v := amp * math.Sin(2*math.Pi*1000*float64(i)/output.ClipRate)
		c[i] = [2]float64{v, v}
	}
	return c
}

// Announcements play at the target like music, relative to their volume:
// a loud and a quiet clip (30 dB apart), and a chime shorter than a gating
// block, all come out at −18 LUFS at announcement volume 100, and 8 dB
// lower at 80. Off, they play as they are.
func TestAnnouncementsPlayAtTheTarget(t *testing.T) {
	for _, c := range []struct {
		mode   string
		volume int
		want   []float64 // LUFS heard of each clip
	}{
		{NormalizeTrack, 100, []float64{-18, -18, -18}},
		{NormalizeFolder, 80, []float64{-26, -26, -26}},
		{NormalizeOff, 100, []float64{-0.9, -30.9, -6.9}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sink := &recSink{perWrite: time.Millisecond}
				h := newHarness(t, catalog{}, Config{AnnounceVolume: c.volume, Normalize: c.mode}, sink)
				clips := [][][2]float64{sineClip(1, 0.9), sineClip(1, 0.9/math.Pow(10, 1.5)), sineClip(0.2, 0.45)}
				from := 0
				for i, clip := range clips {
					done, err := h.p.Announce(context.Background(), clip)
					if err != nil {
						t.Fatal(err)
					}
					<-done
					heard := sink.heard()
					m, err := loudness.NewMeter(output.ClipRate, 2)
					if err != nil {
						t.Fatal(err)
					}
					m.Write(heard[from:])
					got := m.Integrated()
					if m.Seconds() < 0.4 {
						got = m.Momentary()
					}
					if math.Abs(got-c.want[i]) > 0.3 {
						t.Errorf("clip %d: %.2f LUFS heard, want %.1f", i+1, got, c.want[i])
					}
					from = len(heard)
				}
			})
		})
	}
}

// A long message is measured from its first seconds, and the peaks of the
// rest still bound its gain.
func TestLongClipLevel(t *testing.T) {
	c := sineClip(8, 0.1)
	for i := 5 * output.ClipRate; i < len(c); i++ {
		c[i] = [2]float64{0.9, -0.9} // a loud end, after what is measured
	}
	l := clipLevel(c)
	if math.Abs(l.Integrated-(-20.0)) > 0.1 || math.Abs(l.TruePeak-(-0.92)) > 0.05 {
		t.Errorf("level %+v, want about −20.0 LUFS (the first 3 s) and the end's peak, −0.9 dB", l)
	}
}
