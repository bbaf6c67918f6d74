package chime

import (
	"context"
	"math"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/output"
)

// Every sound is short, quiet enough, starts and ends at silence (no
// click), and the sounds differ from each other.
func TestSounds(t *testing.T) {
	seen := map[int]Sound{}
	for _, s := range []Sound{Known, Unknown, Learned, Refused} {
		pcm := PCM(s)
		if len(pcm) == 0 || len(pcm) > output.ClipRate/2 {
			t.Errorf("%v: %d frames, want 1..%d", s, len(pcm), output.ClipRate/2)
		}
		peak := 0.0
		for _, f := range pcm {
			peak = max(peak, math.Abs(f[0]))
			if f[0] != f[1] {
				t.Fatalf("%v: channels differ", s)
			}
		}
		if peak < 0.05 || peak > 0.35 {
			t.Errorf("%v: peak %.2f", s, peak)
		}
		if math.Abs(pcm[0][0]) > 1e-3 || math.Abs(pcm[len(pcm)-1][0]) > 0.01 {
			t.Errorf("%v: starts at %.3f, ends at %.3f", s, pcm[0][0], pcm[len(pcm)-1][0])
		}
		if other, dup := seen[len(pcm)]; dup {
			t.Errorf("%v is as long as %v", s, other)
		}
		seen[len(pcm)] = s
	}
}

type recorder struct{ got [][][2]float64 }

func (r *recorder) Announce(_ context.Context, pcm [][2]float64) (<-chan struct{}, error) {
	r.got = append(r.got, pcm)
	done := make(chan struct{})
	close(done)
	return done, nil
}

func TestPlay(t *testing.T) {
	var r recorder
	if err := Play(context.Background(), &r, Refused); err != nil || len(r.got) != 1 || len(r.got[0]) != len(PCM(Refused)) {
		t.Errorf("Play: %v, %d clips", err, len(r.got))
	}
}
