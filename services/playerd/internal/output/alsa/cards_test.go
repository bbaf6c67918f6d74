package alsa

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Pi 4 with the jack, two HDMI ports and a USB DAC, as /proc/asound shows it.
const (
	piCards = ` 0 [Headphones     ]: bcm2835_headpho - bcm2835 Headphones
                      bcm2835 Headphones
 1 [vc4hdmi0       ]: vc4-hdmi - vc4-hdmi-0
                      vc4-hdmi-0
 2 [Device         ]: USB-Audio - USB Audio Device
                      C-Media Electronics Inc. USB Audio Device at usb-0000:01:00.0-1.3, full speed
 3 [Mic            ]: USB-Audio - Desk Mic
                      Desk Mic at usb-0000:01:00.0-1.4, full speed
`
	piPCM = `00-00: bcm2835 Headphones : bcm2835 Headphones : playback 8
01-00: MAI PCM i2s-hifi-0 : MAI PCM i2s-hifi-0 : playback 1
02-00: USB Audio : USB Audio : playback 1 : capture 1
03-00: USB Audio : USB Audio : capture 1
`
)

func procDir(t *testing.T, cards, pcm string) string {
	dir := t.TempDir()
	for name, s := range map[string]string{"cards": cards, "pcm": pcm} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFind(t *testing.T) {
	dir := procDir(t, piCards, piPCM)
	for spec, want := range map[string]string{
		"":             "/dev/snd/pcmC0D0p",
		"headphones":   "/dev/snd/pcmC0D0p",
		"Headphones,0": "/dev/snd/pcmC0D0p",
		"2":            "/dev/snd/pcmC2D0p",
		"2,0":          "/dev/snd/pcmC2D0p",
		"hw:1,0":       "/dev/snd/pcmC1D0p",
		"USB Audio":    "/dev/snd/pcmC2D0p",
		"usb-audio":    "/dev/snd/pcmC2D0p",
		"C-Media":      "/dev/snd/pcmC2D0p",
		"vc4-hdmi-0":   "/dev/snd/pcmC1D0p",
	} {
		d, err := Find(dir, spec)
		if err != nil {
			t.Errorf("Find(%q): %v", spec, err)
			continue
		}
		if d.Path() != want {
			t.Errorf("Find(%q) = %s, want %s", spec, d.Path(), want)
		}
	}
	d, _ := Find(dir, "USB Audio")
	if d.String() != "hw:2,0 (Device)" || d.LongName == "" {
		t.Errorf("device %+v", d)
	}
}

func TestFindMissing(t *testing.T) {
	dir := procDir(t, piCards, piPCM)
	for _, spec := range []string{"3", "Mic", "Scarlett", "0,1"} {
		_, err := Find(dir, spec)
		if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "hw:0,0 (Headphones)") {
			t.Errorf("Find(%q) = %v, want ErrGone listing what is there", spec, err)
		}
	}
	if _, err := Find(t.TempDir(), ""); !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "no playback device") {
		t.Errorf("no cards: %v", err)
	}
}

func TestParseSpec(t *testing.T) {
	for _, bad := range []string{",0", "1,", "1,x", "-1", "Headphones,-2"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) accepted", bad)
		}
	}
	s, err := ParseSpec("USB Audio,1")
	if err != nil || s != (Spec{Card: -1, Dev: 1, Name: "USB Audio"}) {
		t.Errorf("ParseSpec = %+v, %v", s, err)
	}
}
