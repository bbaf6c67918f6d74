//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
	"github.com/storybox/storybox/services/playerd/internal/output/headphones"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// The headphones mode (storybox.device=headphones): snd-aloop is the speaker,
// captured as in the loopback mode, and qemu's usb-audio device is the
// headphones, which the host plugs in and pulls out through qemu's monitor
// when the console says so ("HOTPLUG add", "HOTPLUG del"; hotplug.go). The
// box's own watcher finds them through the kernel's uevents and
// /proc/asound; qemu records what they played for checkHeadphones.

// phonesCap is the headphones' cap here: volume 50 plays 20 dB below full
// scale, where the speaker at 100 plays at full scale.
const phonesCap = 50

const speakerSpec = "alsa:Loopback,0"

// countedALSA counts what the player writes to the speaker, and keeps the
// last frame written.
type countedALSA struct {
	*output.ALSA
	frames *atomic.Int64
	last   *atomic.Value // [2]float64
}

func (c countedALSA) Write(f [][2]float64) error {
	c.frames.Add(int64(len(f)))
	if len(f) > 0 {
		c.last.Store(f[len(f)-1])
	}
	return c.ALSA.Write(f)
}

func runHeadphones() (string, error) {
	rec, err := record(alsa.Config{}, true)
	if err != nil {
		return "", err
	}
	defer rec.stop()
	speaker, err := output.Parse(speakerSpec)
	if err != nil {
		return "", err
	}
	var toSpeaker atomic.Int64
	var lastOnSpeaker atomic.Value
	open := func(rate int) (output.Sink, error) {
		s, err := speaker(rate)
		if err != nil {
			return nil, err
		}
		return countedALSA{s.(*output.ALSA), &toSpeaker, &lastOnSpeaker}, nil
	}
	var mu sync.Mutex
	var phones *output.ALSA // the last headphone sink opened
	p := player.New(player.Config{Open: open, Catalog: catalog{"f": tones(20)}, MaxVolume: 100, StartVolume: 100})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	var watchErr atomic.Value
	w := headphones.New(headphones.Config{Enabled: true, Speaker: speakerSpec},
		func() ([]alsa.Device, error) { return alsa.PlaybackDevices("/proc/asound") }, headphones.Uevents{},
		func(f headphones.Found) {
			var h *player.Headphones
			if f.Device != "" {
				parsed, err := output.Parse(f.Output)
				if err != nil {
					watchErr.Store(err)
					return
				}
				h = &player.Headphones{Device: f.Device, MaxVolume: phonesCap, Open: func(rate int) (output.Sink, error) {
					s, err := parsed(rate)
					if a, ok := s.(*output.ALSA); ok {
						mu.Lock()
						phones = a
						mu.Unlock()
					}
					return s, err
				}}
			}
			if _, err := p.SetHeadphones(ctx, h); err != nil {
				watchErr.Store(err)
			}
		}, func(err error) { watchErr.Store(err) })
	go w.Run(ctx)

	if _, err := p.Do(ctx, player.Command{Action: player.ActFolder, FolderID: "f"}); err != nil {
		return "", err
	}
	time.Sleep(time.Second)

	fmt.Println("HOTPLUG add")
	asked := time.Now()
	st, ok := waitStateFor(p, 30*time.Second, func(s player.Status) bool { return s.Output == player.OutputHeadphones })
	if !ok {
		return "", fmt.Errorf("the headphones were not found: output %q state %s %q; watcher: %v", st.Output, st.State, st.Error, watchErr.Load())
	}
	switched, onPhones := time.Since(asked), time.Now()
	if st.Volume != phonesCap || st.MaxVolume != phonesCap || st.State != player.Playing {
		return "", fmt.Errorf("on the headphones: volume %d max %d state %s; want %d %d playing", st.Volume, st.MaxVolume, st.State, phonesCap, phonesCap)
	}
	onSpeaker := toSpeaker.Load()
	// The player faded the speaker out before it closed it: the last frame
	// it wrote there is silence (the capture may not show it; see
	// judgeSpeaker).
	if last, _ := lastOnSpeaker.Load().([2]float64); math.Abs(last[0]) > 1e-3 || math.Abs(last[1]) > 1e-3 {
		return "", fmt.Errorf("the last frame written to the speaker before the switch is %v, not silence: no fade", last)
	}
	time.Sleep(2 * time.Second)
	if n := toSpeaker.Load() - onSpeaker; n != 0 {
		return "", fmt.Errorf("%d frames went to the speaker while the headphones played", n)
	}
	if st := p.Status(); st.State != player.Playing {
		return "", fmt.Errorf("on the headphones the state is %s (%q)", st.State, st.Error)
	}
	mu.Lock()
	underruns := phones.Underruns()
	mu.Unlock()

	fmt.Println("HOTPLUG del")
	asked = time.Now()
	played := asked.Sub(onPhones)
	st, ok = waitStateFor(p, 30*time.Second, func(s player.Status) bool { return s.Output == player.OutputSpeaker })
	if !ok {
		return "", fmt.Errorf("still on the headphones after they were pulled: state %s %q", st.State, st.Error)
	}
	unplugged := time.Since(asked)
	if st.State != player.Paused || st.Volume != phonesCap || st.MaxVolume != 100 {
		return "", fmt.Errorf("unplugged: state %s volume %d max %d; want paused %d 100", st.State, st.Volume, st.MaxVolume, phonesCap)
	}
	time.Sleep(time.Second)
	if n := toSpeaker.Load() - onSpeaker; n != 0 {
		return "", fmt.Errorf("%d frames went to the speaker after the headphones were pulled", n)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return "", fmt.Errorf("engine: %w", err)
	}
	got, err := rec.stop()
	if err != nil {
		return "", err
	}
	loud, faded, err := judgeSpeaker(got)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("add->headphones=%dms del->paused=%dms phones-played=%.3f usb-underruns=%d speaker-peak=%.1fdBFS speaker-capture-faded=%v",
		switched.Milliseconds(), unplugged.Milliseconds(), played.Seconds(), underruns, dbfs(loud), faded), nil
}

// judgeSpeaker checks the speaker's capture: the tone at volume 100,
// continuous until the switch. What the loopback hands capture after the
// speaker closed is not looked at (it may be stale). Whether the capture
// shows the fade is reported, not required: the player closes the speaker
// as soon as the device says the fade was played, and snd-aloop hands the
// capture side only whole periods copied before the close (as it does not
// pass a drain's last frames on), so the capture ends in a cut where a DAC
// has played the fade.
func judgeSpeaker(got [][2]int32) (loud int64, faded bool, err error) {
	first := slices.IndexFunc(got, func(fr [2]int32) bool { return fr != [2]int32{} })
	if first < 0 {
		return 0, false, errors.New("the speaker played nothing before the headphones")
	}
	runs := silentRuns(got[first:])
	if len(runs) == 0 {
		return 0, false, errors.New("the speaker never went silent")
	}
	stop := first + runs[0].at
	if stop-first < output.DefaultRate/2 {
		return 0, false, fmt.Errorf("the speaker went silent %d frames after it began, before the headphones came", stop-first)
	}
	end, before := peak(got[stop-fadeCheck/2:stop]), peak(got[stop-2*fadeCheck:stop-fadeCheck])
	if at := splices(got[first:stop]); len(at) > 0 {
		return 0, false, fmt.Errorf("the speaker's tone jumps at frames %v after the first sound", at)
	}
	loud = peak(got[first:stop])
	if d := dbfs(loud) - toneDBFS; d < -1 || d > 1 {
		return 0, false, fmt.Errorf("the speaker's peak %.1f dBFS, want %.1f (the tone at volume 100)", dbfs(loud), toneDBFS)
	}
	return loud, end <= before*6/10, nil
}

// toneDBFS is the test tone's peak; volume v plays it 0.4·(100−v) dB lower.
const toneDBFS = -6.0

// dbfs is a 32-bit peak in dB below full scale.
func dbfs(v int64) float64 { return 20 * math.Log10(float64(v)/(1<<31)) }

// waitStateFor polls the status until cond holds, for at most limit.
func waitStateFor(p *player.Player, limit time.Duration, cond func(player.Status) bool) (player.Status, bool) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st := p.Status(); cond(st) {
			return st, true
		}
	}
	return p.Status(), false
}
