//go:build linux

package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

// The USB mode (storybox.device=usb) plays to qemu's usb-audio device through
// the kernel's snd-usb-audio, the driver of USB DACs: a device that moves
// audio in URBs rather than one DMA ring, and the one most likely to differ
// in how it takes audio back. qemu writes what the device played to a WAV
// file on the host, which checkSpeaker judges after the VM has stopped.
var usbModules = []string{"usb-common", "usbcore", "xhci-hcd", "xhci-pci", "mc", "soundcore", "snd", "snd-timer",
	"snd-pcm", "snd-seq-device", "snd-rawmidi", "snd-usbmidi-lib", "snd-hwdep", "snd-usb-audio"}

// runUSB runs one engine session on the USB device and reports what the host
// needs to judge the recording: how long after play the pause came.
func runUSB() (string, error) {
	cards, err := os.ReadFile("/proc/asound/cards")
	if err != nil {
		return "", err
	}
	s, err := driveEngine()
	if err != nil {
		return "", err
	}
	// qemu records only what the device streamed, so a dropout would not
	// show as silence in the recording: the underrun count stands for it.
	if n := s.sink.Underruns(); n > 0 {
		return "", fmt.Errorf("%d underruns on the USB device", n)
	}
	card, _, _ := strings.Cut(strings.TrimSpace(string(cards)), "\n")
	return fmt.Sprintf("card=%q format=%s rate=%d play-to-volume=%.3f play-to-pause=%.3f",
		strings.Join(strings.Fields(card), " "), s.sink.DeviceFormat(), s.sink.Rate(),
		s.quieter.Sub(s.played).Seconds(), s.paused.Sub(s.played).Seconds()), nil
}

// checkSpeaker judges qemu's recording of the USB device (16-bit stereo
// 48 kHz WAV) on the host: the tone continuous until a fade-out, loud then
// quiet, nothing after the pause. qemu records only what was streamed, so
// the recording's clock stops while the device idles: it shows what was
// played and in which order, not when. playToVolume and playToPause are the
// guest's times from play to those commands, reported beside how long after
// the first sound each was heard.
func checkSpeaker(path string, playToVolume, playToPause float64) (string, error) {
	got, err := readRecording(path)
	if err != nil {
		return "", err
	}
	// The recording ends where the device stopped streaming, the pause's
	// drop, which may come before the silence behind the fade was recorded:
	// after it the device is silent. Without timing, the first silence is
	// the pause.
	got = append(got, make([][2]int32, output.DefaultRate/100)...)
	pl, err := judge(got, func(int) bool { return false })
	if err != nil {
		return "", err
	}
	sounded := float64(pl.stop-pl.first) / output.DefaultRate
	if sounded < playToPause-0.3 || sounded > playToPause+0.3 {
		return "", fmt.Errorf("sounded %.2fs; play to pause took %.2fs", sounded, playToPause)
	}
	if after := peak(got[pl.stop:]); after != 0 {
		return "", fmt.Errorf("sound again after the pause (peak %d)", after)
	}
	return fmt.Sprintf("loud for %.2fs, volume given %.2fs after play; sounded %.2fs, pause given %.2fs after play",
		float64(pl.loud-pl.first)/output.DefaultRate, playToVolume, sounded, playToPause), nil
}

// readRecording decodes qemu's recording, scaled to 32 bits as the loopback
// captures so judge's levels hold.
func readRecording(path string) ([][2]int32, error) {
	st, format, err := decode.Open(path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if format.NumChannels != 2 || int(format.SampleRate) != output.DefaultRate || format.Precision != 2 {
		return nil, fmt.Errorf("recorded %d channels at %d Hz, %d bytes a sample; want 2 at %d, 2",
			format.NumChannels, format.SampleRate, format.Precision, output.DefaultRate)
	}
	var got [][2]int32
	buf := make([][2]float64, 4096)
	for {
		n, ok := st.Stream(buf)
		for _, fr := range buf[:n] {
			got = append(got, [2]int32{output.ToS32(fr[0]), output.ToS32(fr[1])})
		}
		if !ok {
			return got, st.Err()
		}
	}
}
