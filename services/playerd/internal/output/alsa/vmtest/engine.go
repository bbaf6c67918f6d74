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

// runEngine drives the player engine as playerd does with -output alsa: play
// a folder, turn it down, pause it, shut down. It measures, from the capture
// side, how long each command took to be heard.
func runEngine() (string, error) {
	rec, err := startCapture(alsa.Config{})
	if err != nil {
		return "", err
	}
	defer rec.stop()
	parsed, err := output.Parse("alsa")
	if err != nil {
		return "", err
	}
	var sink *output.ALSA // the engine's, for its underrun count
	open := func() (output.Sink, error) {
		s, err := parsed()
		if a, ok := s.(*output.ALSA); ok {
			sink = a
		}
		return s, err
	}
	f := tones(5) // 10 s: if pause failed, sound would go on until shutdown
	var devErr error
	p := player.New(player.Config{Open: open, Catalog: catalog{"f": f}, MaxVolume: 100, StartVolume: 100,
		OnDevice: func(err error) { devErr = err }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	time.Sleep(300 * time.Millisecond) // the engine opens the device at start

	played := time.Now()
	if _, err := p.Do(ctx, player.Command{Action: player.ActFolder, FolderID: "f"}); err != nil {
		cancel()
		return "", err
	}
	time.Sleep(600 * time.Millisecond)
	quieter := time.Now() // 100 -> 60: the -6 dB tone drops to -22 dB
	if _, err := p.Do(ctx, player.Command{Action: player.ActVolume, Value: &volume60}); err != nil {
		cancel()
		return "", err
	}
	time.Sleep(600 * time.Millisecond)
	// Quick taps, each taking back the device buffer again: none may leave
	// a gap or bring back the loud audio.
	var taps []string
	for _, v := range []float64{55, 65, 50, 60} {
		taps = append(taps, fmt.Sprintf("%dms", time.Since(played).Milliseconds()))
		if _, err := p.Do(ctx, player.Command{Action: player.ActVolume, Value: &v}); err != nil {
			cancel()
			return "", err
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	paused := time.Now()
	st, err := p.Do(ctx, player.Command{Action: player.ActPause})
	if err != nil {
		cancel()
		return "", err
	}
	time.Sleep(time.Second)
	closed := time.Now()
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return "", fmt.Errorf("engine: %w", err)
	}
	if devErr != nil {
		return "", fmt.Errorf("engine reported the device: %w", devErr)
	}
	if st.State != player.Paused {
		return "", fmt.Errorf("state after pause: %s", st.State)
	}
	got, err := rec.stop()
	if err != nil {
		return "", err
	}
	first := slices.IndexFunc(got, func(fr [2]int32) bool { return fr != [2]int32{} })
	if first < 0 {
		return "", errors.New("the engine played nothing")
	}
	// Runs of 1 ms or more of silence: the first one heard after the pause
	// command is the pause, any before it a dropout. What capture returns
	// after the pause is not looked at: once the paused engine has dropped
	// the stream, snd-aloop may hand capture stale ring-buffer contents.
	stop := -1
	var gaps []string
	for _, r := range silentRuns(got[first:]) {
		if at := rec.heardAt(first + r.at); at.Before(paused) {
			gaps = append(gaps, fmt.Sprintf("%d/%d heard %dms after play", r.at, r.n, at.Sub(played).Milliseconds()))
			continue
		}
		stop = first + r.at
		break
	}
	if len(gaps) > 0 {
		return "", fmt.Errorf("silent gaps while playing (frames after the first sound/length): %s; volume at %dms, taps at %v, pause at %dms; %d underruns",
			strings.Join(gaps, ", "), quieter.Sub(played).Milliseconds(), taps, paused.Sub(played).Milliseconds(), sink.Underruns())
	}
	if stop-first < 2*fadeCheck {
		return "", fmt.Errorf("no silence after the pause (sound from frame %d, silence at %d)", first, stop)
	}
	// The pause fades out: a cut (drop) would leave the last moments before
	// the silence as loud as those before them.
	if end, before := peak(got[stop-fadeCheck/2:stop]), peak(got[stop-2*fadeCheck:stop-fadeCheck]); end > before*6/10 {
		return "", fmt.Errorf("the pause cut the sound instead of fading it: peak %d in the last 2.5 ms, %d before", end, before)
	}
	last := stop - 1
	// The last loud frame before it: the volume change took effect there.
	loud := -1
	for i, fr := range got[:last+1] {
		if abs(fr[0]) > math.MaxInt32/4 || abs(fr[1]) > math.MaxInt32/4 {
			loud = i
		}
	}
	if loud < 0 || last-loud < output.Rate/10 {
		return "", fmt.Errorf("no loud then quiet sound (loud until frame %d, sound until %d)", loud, last)
	}
	heardFirst, heardLast := rec.heardAt(first), rec.heardAt(last)
	sounding := float64(last-first+1) / output.Rate
	detail := fmt.Sprintf("play->sound=%dms volume->quieter=%dms pause->silence=%dms sounded=%.2fs underruns=%d",
		heardFirst.Sub(played).Milliseconds(), rec.heardAt(loud).Sub(quieter).Milliseconds(),
		heardLast.Sub(paused).Milliseconds(), sounding, sink.Underruns())
	switch {
	case heardFirst.Before(played):
		return "", fmt.Errorf("%s: sound before play", detail)
	case heardLast.After(closed):
		return "", fmt.Errorf("%s: still sounding when the engine shut down", detail)
	case sounding < paused.Sub(played).Seconds()-0.3:
		// The first 50 ms of silence came well before the pause.
		return "", fmt.Errorf("%s: sound stopped %.2fs after play, before the pause", detail, sounding)
	}
	return detail, nil
}

// fadeCheck is the 5 ms window the pause's fade-out is judged by.
const fadeCheck = output.Rate / 200

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
		if j-i >= output.Rate/1000 {
			runs = append(runs, silentRun{i, j - i})
		}
		i = j + 1
	}
	return runs
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
	return r.arrived[k].Add(-time.Duration(end-1-i) * time.Second / output.Rate)
}
