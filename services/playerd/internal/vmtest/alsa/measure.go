//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/measure"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// The measure case's library. 1,000 tracks of 2 s at 22.05 kHz are 176 MB
// of tmpfs in a guest of 512 MB; the rate is low for the memory's sake, and
// the figure is tracks measured, not seconds.
const (
	mediaRoot      = "/media"
	libFolders     = 50
	libPerFolder   = 20
	libTracks      = libFolders * libPerFolder
	libSeconds     = 2
	libRate        = 22050
	playName       = "Tones"
	playTracks     = 4
	playSeconds    = 10 // whole periods of both tones: the joins are seamless
	playFor        = 36 * time.Second
	idleFor        = 5 * time.Second
	playRate       = output.DefaultRate // the loopback's: no resampler, exact joins
	measureVariety = 10                 // distinct masters among the library's tracks
)

// runMeasure plays a folder through the ALSA sink into snd-aloop while the
// background measurement works through a library of 1,000 tracks, wired as
// the box wires it (box/loudness.go: the worker follows the player's state
// and jumps; the player normalises from the store). The play must not
// underrun, and the capture must hold the tone without a gap or a jump until
// the pause. It reports how many tracks were measured while playing and in
// a few seconds idle after.
func runMeasure() (string, error) {
	t0 := time.Now()
	if err := os.MkdirAll(mediaRoot, 0o755); err != nil {
		return "", err
	}
	if err := unix.Mount("tmpfs", mediaRoot, "tmpfs", 0, "size=240m"); err != nil {
		return "", fmt.Errorf("mount %s: %w", mediaRoot, err)
	}
	if err := os.MkdirAll("/data", 0o755); err != nil {
		return "", err
	}
	if err := makeLibrary(mediaRoot); err != nil {
		return "", err
	}
	made := time.Since(t0)
	lib := library.New(mediaRoot, "/data/library-cache.json", nil)
	t0 = time.Now()
	if _, err := lib.Scan(); err != nil {
		return "", err
	}
	scanned := time.Since(t0)
	playID := library.ID(playName)
	if f, ok := lib.Folder(playID); !ok || len(f.Tracks) != playTracks {
		return "", fmt.Errorf("the scan found %d folders, not the played one with %d tracks", len(lib.Folders()), playTracks)
	}
	memFree := memAvailableMB()

	rec, err := recordFor(alsa.Config{}, playFor+5*time.Second)
	if err != nil {
		return "", err
	}
	defer rec.stop()
	parsed, err := output.Parse("alsa")
	if err != nil {
		return "", err
	}
	var sink *output.ALSA // the last the engine opened, for its underrun count
	open := func(rate int) (output.Sink, error) {
		s, err := parsed(rate)
		if a, ok := s.(*output.ALSA); ok {
			sink = a
		}
		return s, err
	}
	store := measure.Open("/data/loudness.json")
	var devErr, measureErr error
	var errMu sync.Mutex
	p := player.New(player.Config{Open: open, Catalog: lib, MaxVolume: 100, StartVolume: 100,
		Normalize: player.NormalizeFolder, Levels: player.MeasuredLevels(store),
		OnDevice: func(err error) { devErr = err }})
	worker := measure.New(measure.Config{
		Library: lib,
		Store:   store,
		Activity: func() (bool, uint64) {
			st := p.Status()
			return st.State == player.Playing, st.Jumps
		},
		OnError: func(err error) { errMu.Lock(); measureErr = errors.Join(measureErr, err); errMu.Unlock() },
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var wg sync.WaitGroup
	// storybox.measure=off plays the same without measuring: the control
	// that tells an underrun of the host's load from one of measuring.
	control := kernelParam("storybox.measure") == "off"
	if !control {
		wg.Go(func() { worker.Run(ctx) })
	}
	time.Sleep(300 * time.Millisecond) // the engine opens the device at start

	before := store.Progress().Measured // measured at full speed, idle, before play
	played := time.Now()
	if _, err := p.Do(ctx, player.Command{Action: player.ActFolder, FolderID: playID}); err != nil {
		return "", fmt.Errorf("play: %w", err)
	}
	// Play until the time is up or the library is measured, whichever
	// comes first: once every library track is measured the played folder
	// (the oldest files, measured last) would be next, and its new gain
	// would change the level between two of its tracks.
	deadline := time.After(playFor)
wait:
	for {
		changed := store.Changed()
		if pr := store.Progress(); pr.Measured+pr.Failed >= libTracks {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			break wait
		}
	}
	progress := store.Progress()
	paused := time.Now()
	st, err := p.Do(ctx, player.Command{Action: player.ActPause})
	if err != nil {
		return "", fmt.Errorf("pause: %w", err)
	}
	time.Sleep(time.Second)
	closed := time.Now()
	// A capture that overran (its reader starved for 1.4 s) is reported
	// with the play's underruns, which tell whether the host starved the
	// VM.
	got, capErr := rec.stop()
	idleFrom := store.Progress().Measured
	time.Sleep(idleFor)
	idle := store.Progress().Measured - idleFrom
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return "", fmt.Errorf("engine: %w", err)
	}
	wg.Wait()

	playing := paused.Sub(played)
	measured := progress.Measured - before
	detail := fmt.Sprintf("library=%d made=%.1fs scanned=%.1fs mem-available=%dMB measured-before-play=%d measured-while-playing=%d/%d in %.1fs idle-measured=%d in %.0fs failed=%d",
		libTracks, made.Seconds(), scanned.Seconds(), memFree, before, measured, libTracks, playing.Seconds(), idle, idleFor.Seconds(), progress.Failed)
	if sink == nil {
		return "", errors.New("the engine opened no ALSA device")
	}
	detail += fmt.Sprintf(" control=%v underruns=%d", control, sink.Underruns())
	if capErr != nil {
		return "", fmt.Errorf("%s: %w", detail, capErr)
	}
	if sink.Underruns() > 0 { // where: the gaps they left (48,000 frames a second; a track starts every 10 s)
		if _, _, err := judgeTone(got, func(i int) bool { return rec.heardAt(i).Before(paused) }); err != nil {
			detail += fmt.Sprintf(" (%v; sound began %dms after play)", err, rec.heardAt(firstSound(got)).Sub(played).Milliseconds())
		}
	}
	errMu.Lock()
	defer errMu.Unlock()
	switch {
	case devErr != nil:
		return "", fmt.Errorf("%s: the engine reported the device: %w", detail, devErr)
	case measureErr != nil:
		return "", fmt.Errorf("%s: measuring: %w", detail, measureErr)
	case st.State != player.Paused:
		return "", fmt.Errorf("%s: state after pause: %s", detail, st.State)
	case sink.Underruns() > 0 && control:
		return "", fmt.Errorf("%s: the play underran without measuring (the host starved the VM)", detail)
	case sink.Underruns() > 0:
		return "", fmt.Errorf("%s: the play underran while measuring", detail)
	case progress.Failed > 0:
		return "", fmt.Errorf("%s: tracks failed to measure", detail)
	case measured == 0 && !control:
		return "", fmt.Errorf("%s: nothing was measured while playing", detail)
	}
	first, stop, err := judgeTone(got, func(i int) bool { return rec.heardAt(i).Before(paused) })
	if err != nil {
		return "", fmt.Errorf("%s: %w", detail, err)
	}
	sounding := float64(stop-first) / output.DefaultRate
	heardLast := rec.heardAt(stop - 1)
	// Every track of the played folder is unmeasured while it plays (it
	// is measured last), so the whole play has one gain.
	norm := player.Normalization{By: "none"}
	if st.Normalize != nil {
		norm = *st.Normalize
	}
	level := dbfs(peak(got[first:stop]))
	detail += fmt.Sprintf(" sounded=%.2fs normalize=%s/%+.1fdB peak=%.1fdBFS", sounding, norm.By, norm.GainDB, level)
	switch {
	case norm.By != player.ByUnmeasured:
		return "", fmt.Errorf("%s: the played folder should play unmeasured", detail)
	case math.Abs(level-(toneDBFS+norm.GainDB)) > 1:
		return "", fmt.Errorf("%s: want the tone's %.1f dBFS at the gain", detail, toneDBFS)
	case heardLast.After(closed):
		return "", fmt.Errorf("%s: still sounding when the engine shut down", detail)
	case sounding < playing.Seconds()-0.3:
		return "", fmt.Errorf("%s: sound stopped before the pause", detail)
	}
	return detail, nil
}

// makeLibrary writes the library under root: libFolders folders of
// libPerFolder tracks, drawn from measureVariety masters of different level
// and pitch, and the played folder: playTracks tracks of the test tone, a
// day older than the rest, so that measuring (newest first) reaches them
// last.
func makeLibrary(root string) error {
	var masters [measureVariety][]byte
	for v := range masters {
		a := 32767 * math.Pow(10, (-6-2.5*float64(v))/20)
		hz := 220 * float64(v+1)
		frames := make([][2]int16, libSeconds*libRate)
		for i := range frames {
			x := int16(a * math.Sin(2*math.Pi*hz*float64(i)/libRate))
			frames[i] = [2]int16{x, x}
		}
		masters[v] = testmedia.WAV(libRate, frames)
	}
	for f := range libFolders {
		dir := filepath.Join(root, fmt.Sprintf("Hörspiel %02d", f+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for t := range libPerFolder {
			// Each a file of its own (its own inode): measuring keys on
			// the inode, so copies are measured one by one.
			name := filepath.Join(dir, fmt.Sprintf("%02d Kapitel.wav", t+1))
			if err := os.WriteFile(name, masters[(f+t)%measureVariety], 0o644); err != nil {
				return fmt.Errorf("library: %w", err)
			}
		}
	}
	a := math.Pow(10, toneDBFS/20) * 32767
	frames := make([][2]int16, playSeconds*playRate)
	for i := range frames {
		for c := range 2 {
			frames[i][c] = int16(math.Round(a * math.Sin(2*math.Pi*toneHz[c]*float64(i)/playRate)))
		}
	}
	tone := testmedia.WAV(playRate, frames)
	dir := filepath.Join(root, playName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old := time.Now().Add(-24 * time.Hour)
	for t := range playTracks {
		name := filepath.Join(dir, fmt.Sprintf("%02d Ton.wav", t+1))
		if err := os.WriteFile(name, tone, 0o644); err != nil {
			return fmt.Errorf("library: %w", err)
		}
		if err := os.Chtimes(name, old, old); err != nil {
			return err
		}
	}
	return nil
}

// memAvailableMB is the guest's available memory once the library is
// written: what the tmpfs left.
func memAvailableMB() int {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb / 1024
		}
	}
	return -1
}

// firstSound is the first frame that is not silent (0 if none is).
func firstSound(got [][2]int32) int {
	for i, fr := range got {
		if fr != [2]int32{} {
			return i
		}
	}
	return 0
}
