//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

const aloopDriver = "/sys/bus/platform/drivers/snd_aloop/"

// runUnplug pulls the sound card out from under the playing engine, as
// unplugging a USB DAC does: unbinding the driver disconnects the card
// (blocked transfers fail, with EBADFD, then ENODEV) and completes only once
// every open file is closed. Then it plugs the card back in and expects the
// engine to find it again and play on, without a restart.
func runUnplug() (string, error) {
	// The recordings here only show that sound comes, and the card going
	// away under a read may end it with an overrun as well as ENODEV.
	rec, err := record(alsa.Config{}, true)
	if err != nil {
		return "", err
	}
	open, err := output.Parse("alsa")
	if err != nil {
		return "", err
	}
	f := tones(5)
	p := player.New(player.Config{Open: open, Catalog: catalog{"f": f}, MaxVolume: 100, StartVolume: 100})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	if _, err := p.Do(ctx, player.Command{Action: player.ActFolder, FolderID: "f"}); err != nil {
		return "", err
	}
	time.Sleep(time.Second)

	unplugged := time.Now()
	unbound := make(chan error, 1)
	go func() { unbound <- os.WriteFile(aloopDriver+"unbind", []byte("snd_aloop.0"), 0) }()
	if _, err := rec.stop(); err != nil && !errors.Is(err, alsa.ErrGone) {
		return "", err
	}
	st, ok := waitState(p, func(s player.Status) bool { return s.State == player.Failed })
	if !ok {
		return "", fmt.Errorf("after unplug the state is %s (%q), want error", st.State, st.Error)
	}
	lostAfter, lostMsg := time.Since(unplugged), st.Error
	if !strings.Contains(lostMsg, output.ErrDeviceLost.Error()) {
		return "", fmt.Errorf("error message %q does not say the device was lost", lostMsg)
	}
	select {
	case err := <-unbound:
		if err != nil {
			return "", fmt.Errorf("unbind: %w", err)
		}
	case <-time.After(10 * time.Second):
		return "", errors.New("unbind still waits: something keeps the device open")
	}
	time.Sleep(1500 * time.Millisecond) // the engine retries and fails meanwhile
	if st := p.Status(); st.State != player.Failed {
		return "", fmt.Errorf("without a device the state is %s, want error", st.State)
	}
	absentMsg := p.Status().Error

	if err := os.WriteFile(aloopDriver+"bind", []byte("snd_aloop.0"), 0); err != nil {
		return "", fmt.Errorf("bind: %w", err)
	}
	plugged := time.Now()
	for range 100 {
		if _, err := os.Stat(captureNode); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if rec, err = record(alsa.Config{}, true); err != nil {
		return "", err
	}
	defer rec.stop()
	st, ok = waitState(p, func(s player.Status) bool { return s.State == player.Playing })
	if !ok {
		return "", fmt.Errorf("after plugging back in the state is %s (%q), want playing", st.State, st.Error)
	}
	recovered := time.Since(plugged)
	time.Sleep(1500 * time.Millisecond)
	cancel()
	<-done
	got, err := rec.stop()
	if err != nil {
		return "", err
	}
	sound := 0
	for _, fr := range got {
		if fr != [2]int32{} {
			sound++
		}
	}
	if sound < output.DefaultRate/4 { // enough to prove it plays; a busy host slows the VM
		return "", fmt.Errorf("only %d frames of sound after the device came back", sound)
	}
	return fmt.Sprintf("error-after=%dms replugged-playing-after=%dms sound-after=%.2fs error=%q absent=%q",
		lostAfter.Milliseconds(), recovered.Milliseconds(), float64(sound)/output.DefaultRate, lostMsg, absentMsg), nil
}

// waitState polls the status until cond holds, for at most 10 s.
func waitState(p *player.Player, cond func(player.Status) bool) (player.Status, bool) {
	for range 500 {
		if st := p.Status(); cond(st) {
			return st, true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p.Status(), false
}
