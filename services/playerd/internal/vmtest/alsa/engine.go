//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

var volume60 = 60.0

func abs(v int32) int64 { return max(int64(v), -int64(v)) }

type catalog map[string]library.Folder

func (c catalog) Folder(id string) (library.Folder, bool) { f, ok := c[id]; return f, ok }

// session is one run of the engine as playerd drives it with -output alsa,
// and when each command was given.
type session struct {
	played, quieter, paused, closed time.Time
	taps                            []time.Duration // after play
	sink                            *output.ALSA    // the engine's, for its underrun count
}

// driveEngine plays a folder on the first ALSA device, turns it down, taps
// the volume four times, pauses and shuts the engine down.
func driveEngine() (*session, error) {
	parsed, err := output.Parse("alsa")
	if err != nil {
		return nil, err
	}
	s := &session{}
	// The engine opens the device at start, and again at the folder's own
	// rate (tone.flac: 44.1 kHz) when it starts; the loopback holds that
	// to the capture's 48 kHz, so the engine resamples. s.sink is the
	// last one opened.
	open := func(rate int) (output.Sink, error) {
		sink, err := parsed(rate)
		if a, ok := sink.(*output.ALSA); ok {
			s.sink = a
		}
		return sink, err
	}
	f := tones(5) // 10 s: if pause failed, sound would go on until shutdown
	var devErr error
	p := player.New(player.Config{Open: open, Catalog: catalog{"f": f}, MaxVolume: 100, StartVolume: 100,
		OnDevice: func(err error) { devErr = err }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	time.Sleep(300 * time.Millisecond) // the engine opens the device at start

	do := func(c player.Command) (player.Status, error) {
		st, err := p.Do(ctx, c)
		if err != nil {
			return st, fmt.Errorf("%s: %w", c.Action, err)
		}
		return st, nil
	}
	s.played = time.Now()
	if _, err := do(player.Command{Action: player.ActFolder, FolderID: "f"}); err != nil {
		return nil, err
	}
	time.Sleep(600 * time.Millisecond)
	s.quieter = time.Now() // 100 -> 60: the -6 dB tone drops to -22 dB
	if _, err := do(player.Command{Action: player.ActVolume, Value: &volume60}); err != nil {
		return nil, err
	}
	time.Sleep(600 * time.Millisecond)
	// Quick taps, each taking back the device buffer again: none may leave
	// a gap or bring back the loud audio.
	for _, v := range []float64{55, 65, 50, 60} {
		s.taps = append(s.taps, time.Since(s.played).Round(time.Millisecond))
		if _, err := do(player.Command{Action: player.ActVolume, Value: &v}); err != nil {
			return nil, err
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	s.paused = time.Now()
	st, err := do(player.Command{Action: player.ActPause})
	if err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	s.closed = time.Now()
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if devErr != nil {
		return nil, fmt.Errorf("engine reported the device: %w", devErr)
	}
	if st.State != player.Paused {
		return nil, fmt.Errorf("state after pause: %s", st.State)
	}
	if s.sink == nil {
		return nil, errors.New("the engine opened no ALSA device")
	}
	return s, nil
}

// playback is what a session sounded like: where sound began, where the pause
// silenced it, and the last loud (volume 100) frame.
type playback struct{ first, stop, loud int }

// judge checks what the device played in a session: the tone held up to
// the pause (judgeTone), loud then quiet.
func judge(got [][2]int32, beforePause func(i int) bool) (playback, error) {
	first, stop, err := judgeTone(got, beforePause)
	if err != nil {
		return playback{}, err
	}
	// The volume change took effect after the last loud frame.
	loud := -1
	for i, fr := range got[:stop] {
		if abs(fr[0]) > math.MaxInt32/4 || abs(fr[1]) > math.MaxInt32/4 {
			loud = i
		}
	}
	if loud < 0 || stop-loud < output.DefaultRate/10 {
		return playback{}, fmt.Errorf("no loud then quiet sound (loud until frame %d, silence from %d)", loud, stop)
	}
	return playback{first, stop, loud}, nil
}

// judgeTone checks that the test tone played without a fault until the
// pause: sound, no silence of 1 ms or more before the pause, no jump in the
// tone, a fade-out (not a cut) at the pause. beforePause tells whether
// frame i was heard before the pause command; what follows the pause's
// silence is not looked at. It returns the first sounding frame and the
// first silent one after the sound.
func judgeTone(got [][2]int32, beforePause func(i int) bool) (first, stop int, err error) {
	first = slices.IndexFunc(got, func(fr [2]int32) bool { return fr != [2]int32{} })
	if first < 0 {
		return 0, 0, errors.New("the engine played nothing")
	}
	stop = -1
	var gaps []string
	for _, r := range silentRuns(got[first:]) {
		if beforePause(first + r.at) {
			gaps = append(gaps, fmt.Sprintf("%d/%d", r.at, r.n))
			continue
		}
		stop = first + r.at
		break
	}
	if len(gaps) > 0 {
		return 0, 0, fmt.Errorf("silent gaps while playing (frames after the first sound/length): %s", strings.Join(gaps, ", "))
	}
	if stop-first < 2*fadeCheck {
		return 0, 0, fmt.Errorf("no silence after the pause (sound from frame %d, silence at %d)", first, stop)
	}
	// A cut (drop) would leave the last moments before the silence as loud
	// as those before them.
	if end, before := peak(got[stop-fadeCheck/2:stop]), peak(got[stop-2*fadeCheck:stop-fadeCheck]); end > before*6/10 {
		return 0, 0, fmt.Errorf("the pause cut the sound instead of fading it: peak %d in the last 2.5 ms, %d before", end, before)
	}
	if at := splices(got[first:stop]); len(at) > 0 {
		return 0, 0, fmt.Errorf("the tone jumps (audio lost, repeated or stale) at frames %v after the first sound", at)
	}
	return first, stop, nil
}

// runEngine runs a session on snd-aloop and judges it from the capture side,
// where it also measures how long each command took to be heard.
func runEngine() (string, error) {
	rec, err := startCapture(alsa.Config{})
	if err != nil {
		return "", err
	}
	defer rec.stop()
	s, err := driveEngine()
	if err != nil {
		return "", err
	}
	got, err := rec.stop()
	if err != nil {
		return "", err
	}
	// Runs of silence heard before the pause command are dropouts. What
	// capture returns after the pause is not looked at: once the paused
	// engine has dropped the stream, snd-aloop may hand capture stale
	// ring-buffer contents.
	pl, err := judge(got, func(i int) bool { return rec.heardAt(i).Before(s.paused) })
	if err != nil {
		return "", fmt.Errorf("%w; volume at %v, taps at %v, pause at %v after play; %d underruns",
			err, s.quieter.Sub(s.played).Round(time.Millisecond), s.taps, s.paused.Sub(s.played).Round(time.Millisecond), s.sink.Underruns())
	}
	heardFirst, heardLast := rec.heardAt(pl.first), rec.heardAt(pl.stop-1)
	sounding := float64(pl.stop-pl.first) / output.DefaultRate
	detail := fmt.Sprintf("play->sound=%dms volume->quieter=%dms pause->silence=%dms sounded=%.2fs underruns=%d",
		heardFirst.Sub(s.played).Milliseconds(), rec.heardAt(pl.loud).Sub(s.quieter).Milliseconds(),
		heardLast.Sub(s.paused).Milliseconds(), sounding, s.sink.Underruns())
	switch {
	case heardFirst.Before(s.played):
		return "", fmt.Errorf("%s: sound before play", detail)
	case heardLast.After(s.closed):
		return "", fmt.Errorf("%s: still sounding when the engine shut down", detail)
	case sounding < s.paused.Sub(s.played).Seconds()-0.3:
		return "", fmt.Errorf("%s: sound stopped %.2fs after play, before the pause", detail, sounding)
	}
	return detail, nil
}

// fadeCheck is the 5 ms window the pause's fade-out is judged by.
const fadeCheck = output.DefaultRate / 200

type silentRun struct{ at, n int }

// silentRuns lists the runs of 1 ms or more of digital silence in captured
// audio; the test tone is never zero for two frames in a row.
func silentRuns(got [][2]int32) []silentRun {
	var runs []silentRun
	for i := 0; i < len(got); {
		j := i
		for j < len(got) && got[j] == [2]int32{} {
			j++
		}
		if j-i >= output.DefaultRate/1000 {
			runs = append(runs, silentRun{i, j - i})
		}
		i = j + 1
	}
	return runs
}

// toneHz are the test tone's frequencies, left and right.
var toneHz = [2]float64{440, 660}

// splices lists the frames where the tone does not continue as a sine: a
// sine satisfies x[n+1] + x[n-1] = 2cos(w)·x[n]. The gain ramps of fades and
// volume changes bend that by under 0.1 % of the level; a jump to other audio
// (lost, repeated or stale) breaks it by up to the level itself, if it lands
// away from a peak. The level is the peak of the 5 ms block around a frame
// and its neighbours, so that a long capture (the measure case's 40 s) is
// judged in one pass. At most the first ten are listed.
func splices(got [][2]int32) []int {
	var at []int
	const window = output.DefaultRate / 200 // 5 ms: over two periods of 440 Hz
	blocks := make([]int64, (len(got)+window-1)/window)
	for b := range blocks {
		blocks[b] = peak(got[b*window : min(len(got), (b+1)*window)])
	}
	for n := 1; n+1 < len(got) && len(at) < 10; n++ {
		b := n / window
		level := slices.Max(blocks[max(0, b-1):min(len(blocks), b+2)])
		for c := range 2 {
			k := 2 * math.Cos(2*math.Pi*toneHz[c]/output.DefaultRate)
			r := float64(got[n+1][c]) + float64(got[n-1][c]) - k*float64(got[n][c])
			if math.Abs(r) > 0.02*float64(level)+4<<16 {
				at = append(at, n)
				break
			}
		}
	}
	return at
}

func peak(frames [][2]int32) int64 {
	var m int64
	for _, fr := range frames {
		m = max(m, abs(fr[0]), abs(fr[1]))
	}
	return m
}

// tones is a folder of n copies of the 2 s test tone.
func tones(n int) library.Folder {
	f := library.Folder{ID: "f", Name: "Tones"}
	for i := range n {
		f.Tracks = append(f.Tracks, library.Track{ID: fmt.Sprint(i), Title: "Tone", Duration: 2, Path: "/tone.flac"})
	}
	return f
}

// heardAt estimates when captured frame i came out of the loopback: its read
// returned once the period that holds it was complete.
func (r *recorder) heardAt(i int) time.Time {
	per := r.c.Period()
	k := min(i/per, len(r.arrived)-1)
	end := (k + 1) * per
	return r.arrived[k].Add(-time.Duration(end-1-i) * time.Second / output.DefaultRate)
}
