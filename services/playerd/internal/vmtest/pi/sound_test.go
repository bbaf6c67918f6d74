package main

import (
	"strings"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/output"
)

// play renders what the device should receive for a play of src from its
// start: the fade-in, full scale until frame down, a linear ramp to gain g
// over ramp frames, g until frame pause, a fade-out, silence.
func play(src [][2]int16, down, ramp, pause int, g float64) [][2]int16 {
	fade := output.FadeFrames
	var out [][2]int16
	out = append(out, make([][2]int16, 500)...) // the device starts silent
	for i := 0; i < min(pause+fade, len(src)); i++ {
		gain := 1.0
		switch {
		case i < 4096: // fading in, ramping up from volume 30
			gain = gainFor(30) + (1-gainFor(30))*float64(i)/4096
			gain *= min(1, float64(i)/float64(fade))
		case i >= pause:
			gain = g * (1 - float64(i-pause+1)/float64(fade))
		case i >= down+ramp:
			gain = g
		case i >= down:
			gain = 1 - (1-g)*float64(i-down+1)/float64(ramp)
		}
		if gain == 1 {
			out = append(out, src[i])
		} else {
			out = append(out, scaled(src[i], gain))
		}
	}
	return append(out, make([][2]int16, 100)...)
}

// cut takes n frames out of rec at frame at.
func cut(rec [][2]int16, at, n int) [][2]int16 {
	return append(append([][2]int16{}, rec[:at]...), rec[at+n:]...)
}

func TestJudgeSegment(t *testing.T) {
	src := signal()
	const down, ramp, pause, vol = 3 * signalRate, 2048, 6 * signalRate, 70
	good := play(src, down, ramp, pause, gainFor(vol))

	h, err := judgeSegment(good, src, vol)
	if err != nil {
		t.Fatalf("a faithful play was refused: %v", err)
	}
	if h.full < down-4096 || h.full > down || h.ramp > ramp+1 || !h.faded {
		t.Errorf("judged %+v; want about %d frames full, a ramp of at most %d", h, down, ramp)
	}

	// Whole USB packets lost on the way (qemu) are gaps, counted.
	gappy := cut(cut(cut(good, 500+down+ramp+signalRate/3, 48), 500+down/2, 49), 500+signalRate/2, 48)
	if h, err := judgeSegment(gappy, src, vol); err != nil || len(h.gaps) != 3 {
		t.Errorf("packets lost in three places: got %+v, %v; want three gaps", h, err)
	}

	// One just before the pause's fade.
	if h, err := judgeSegment(cut(good, 500+pause-48, 48), src, vol); err != nil || len(h.gaps) != 1 {
		t.Errorf("a packet lost before the fade: got %+v, %v; want one gap", h, err)
	}

	// A recording cut short (the rest not yet written) says so.
	if _, err := judgeSegment(good[:500+pause-100], src, vol); err != errUnfinished {
		t.Errorf("a recording ending before the pause: got %v, want errUnfinished", err)
	}

	// qemu may start recording inside the fade-in.
	if _, err := judgeSegment(good[500+64:], src, vol); err != nil {
		t.Errorf("a recording starting inside the fade-in was refused: %v", err)
	}
	if _, err := judgeSegment(good[500+output.FadeFrames+50:], src, vol); err == nil || !strings.Contains(err.Error(), "past its fade-in") {
		t.Errorf("a recording starting after the fade-in: got %v", err)
	}

	// An earlier, broken try before the play that counts is not held
	// against it.
	if _, err := judgeSegment(append(play(src, signalRate, 100, 2*signalRate, 0.5), good...), src, vol); err != nil {
		t.Errorf("an earlier try spoiled the judgement: %v", err)
	}

	louder := append([][2]int16{}, good...)
	for i := 500 + pause - 5000; i < 500+pause; i++ {
		louder[i] = scaled(src[i-500], gainFor(vol+5))
	}
	for _, tc := range []struct {
		name, want string
		rec        [][2]int16
	}{
		{"a period lost at full scale", "a frame lost", cut(good, 500+down/2, 1024)},
		{"a period lost at the lower volume", "broke off", cut(good, 500+pause-signalRate/4, 1024)},
		{"a frame repeated at full scale", "a frame lost", append(append(append([][2]int16{}, good[:500+down/2]...), good[500+down/2-1]), good[500+down/2:]...)},
		{"a wrong volume", "broke off", louder},
		{"never turned down", "at volume 70", play(src, len(src)-3*output.FadeFrames, 1, len(src)-output.FadeFrames, 1)},
		{"never paused", "pause did not act", play(src, down, ramp, len(src), gainFor(vol))},
		{"silence", "not heard", make([][2]int16, len(good))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := judgeSegment(tc.rec, src, vol)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestSignalIsUniqueAtTheWindow(t *testing.T) {
	// The judge places a recording by one window of the track: it must occur
	// once.
	src := signal()
	key := src[keyAt : keyAt+alignWindow]
	n := 0
	for i := 0; i+alignWindow <= len(src); i++ {
		if src[i] == key[0] && equal(src[i:i+alignWindow], key) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the alignment window occurs %d times in the track", n)
	}
}
