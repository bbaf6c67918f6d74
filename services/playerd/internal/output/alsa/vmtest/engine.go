//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
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
	open, err := output.Parse("alsa")
	if err != nil {
		return "", err
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
	// The pause is where 50 ms of silence begin. What capture returns after
	// that is not looked at: when the paused engine drains its short fade,
	// snd-aloop may hand capture stale ring-buffer contents.
	last := -1
	for i, zeros := first, 0; i < len(got); i++ {
		if got[i] != [2]int32{} {
			last, zeros = i, 0
		} else if zeros++; zeros == output.Rate/20 {
			break
		}
	}
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
	detail := fmt.Sprintf("play->sound=%dms volume->quieter=%dms pause->silence=%dms sounded=%.2fs",
		heardFirst.Sub(played).Milliseconds(), rec.heardAt(loud).Sub(quieter).Milliseconds(),
		heardLast.Sub(paused).Milliseconds(), sounding)
	switch {
	case heardFirst.Before(played):
		return "", fmt.Errorf("%s: sound before play", detail)
	case heardLast.After(closed):
		return "", fmt.Errorf("%s: still sounding when the engine shut down", detail)
	case sounding < 0.2:
		return "", fmt.Errorf("%s: want about 1 s of sound", detail)
	}
	return detail, nil
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
