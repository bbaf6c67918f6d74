package main

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/input/gpio"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
	"github.com/storybox/storybox/services/playerd/internal/output/headphones"
)

// usbPort is a USB port of the test: the sound cards there are and the
// uevent the kernel sends when they change.
type usbPort struct {
	mu     sync.Mutex
	devs   []alsa.Device
	events chan struct{}
}

func (u *usbPort) cards() ([]alsa.Device, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]alsa.Device(nil), u.devs...), nil
}

func (u *usbPort) Changes(ctx context.Context) (<-chan struct{}, error) {
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		for {
			select {
			case <-u.events:
				select {
				case out <- struct{}{}:
				default:
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (u *usbPort) plug(devs ...alsa.Device) {
	u.mu.Lock()
	u.devs = devs
	u.mu.Unlock()
	u.events <- struct{}{}
}

// Through the API, with a WAV file for each output: the music moves to the
// headphones at their cap when they are plugged in (the recording is
// quieter by the caps' difference), and pauses when they are unplugged,
// without a sound more from the speaker.
func TestHeadphonesPlugAndUnplug(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	levelWAV(t, filepath.Join(media, "Tag", "Folge 1.wav"), 30)
	dir := t.TempDir()
	speakerWAV, phonesWAV := filepath.Join(dir, "speaker.wav"), filepath.Join(dir, "phones.wav")
	port := &usbPort{events: make(chan struct{})}
	base, stop := startBoxWith(t, media, data, func(c *setup) {
		c.Output = "wav:" + speakerWAV
		c.headphones.Cards, c.headphones.Source = port.cards, port
		c.headphones.Open = func(f headphones.Found) (output.Opener, error) {
			if f.Output != "alsa:1,0" {
				t.Errorf("headphones found at %q, want alsa:1,0", f.Output)
			}
			return output.WAVOpener(phonesWAV, true), nil
		}
	})
	defer stop()
	c := client(t, base)
	c.do("PUT", "/api/admin/settings", `{"audio":{"headphone_max_volume":0}}`).want(t, "a cap of 0", 400, "audio.headphone_max_volume must be 1..100, not 0")
	// Normalisation off: the levels below are the caps' alone (with it on,
	// the unmeasured file would play 13 dB lower on both).
	c.ok("PUT", "/api/admin/settings", `{"audio":{"max_volume":80,"headphone_max_volume":50,"normalize":"off"}}`)
	ids := folderIDsByName(t, base)
	if st := c.do("GET", "/api/status", "").body; st["output"] != "speaker" {
		t.Fatalf("output at start %v", st["output"])
	}
	c.command(`{"action":"volume","value":80}`)
	c.command(`{"action":"folder","folder_id":"` + ids["Tag"] + `"}`)
	waitStatus(t, c, "a second on the speaker", func(st map[string]any) bool { return st["position"].(float64) >= 1 })

	port.plug(alsa.Device{Card: 1, Dev: 0, CardID: "Headset", CardName: "USB Headset", Driver: "USB-Audio"})
	st := waitStatus(t, c, "the headphones", func(st map[string]any) bool { return st["output"] == "headphones" })
	if st["volume"] != 50.0 || st["max_volume"] != 50.0 || st["state"] != "playing" {
		t.Errorf("on the headphones: volume %v max %v state %v; want 50 50 playing", st["volume"], st["max_volume"], st["state"])
	}
	plugged := st["position"].(float64)
	waitStatus(t, c, "a second on the headphones", func(st map[string]any) bool { return st["position"].(float64) >= plugged+1 })

	port.plug()
	st = waitStatus(t, c, "the speaker", func(st map[string]any) bool { return st["output"] == "speaker" })
	if st["state"] != "paused" || st["volume"] != 50.0 || st["max_volume"] != 80.0 {
		t.Errorf("unplugged: state %v volume %v max %v; want paused 50 80", st["state"], st["volume"], st["max_volume"])
	}
	stop()

	// 16000 × the gain of volume 80 (−8 dB) and of 50 (−20 dB).
	spk, ph := leftChannel(t, speakerWAV), leftChannel(t, phonesWAV)
	if got, want := peak(spk), 16000*math.Pow(10, -8.0/20); math.Abs(got-want) > 2 {
		t.Errorf("speaker level %.0f, want %.0f", got, want)
	}
	if got, want := peak(ph), 16000*math.Pow(10, -20.0/20); math.Abs(got-want) > 2 {
		t.Errorf("headphone level %.0f, want %.0f", got, want)
	}
	// What the speaker played ends where the headphones took over (give or
	// take the fade and a status's second).
	if heard := float64(sounding(spk)) / 48000; heard > plugged+1 {
		t.Errorf("the speaker played %.2f s; the headphones took over at %.2f s", heard, plugged)
	}
	if heard := float64(sounding(ph)) / 48000; heard < 1 {
		t.Errorf("the headphones played %.2f s", heard)
	}
}

func peak(s []int16) float64 {
	m := 0.0
	for _, v := range s {
		m = max(m, math.Abs(float64(v)))
	}
	return m
}

func sounding(s []int16) int {
	n := 0
	for _, v := range s {
		if v != 0 {
			n++
		}
	}
	return n
}

// jackChip is a GPIO chip with the jack-detect line on it, for the input
// layer (hooks.gpio).
type jackChip struct {
	mu     sync.Mutex
	level  bool
	lines  *jackLines
	opened chan struct{}
}

type jackLines struct {
	chip   *jackChip
	offs   []int
	events chan gpio.Event
	closed chan struct{}
	once   sync.Once
}

func (c *jackChip) Open(g input.GPIO, offsets []int) (input.Lines, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = &jackLines{chip: c, offs: offsets, events: make(chan gpio.Event, 8), closed: make(chan struct{})}
	c.opened <- struct{}{}
	return c.lines, "test chip", nil
}

// set moves the jack's line (5).
func (c *jackChip) set(active bool) {
	c.mu.Lock()
	c.level = active
	l := c.lines
	c.mu.Unlock()
	l.events <- gpio.Event{Offset: 5, Active: active}
}

func (l *jackLines) Read() (gpio.Event, error) {
	select {
	case ev := <-l.events:
		return ev, nil
	case <-l.closed:
		return gpio.Event{}, errors.New("closed")
	}
}

func (l *jackLines) Values() ([]bool, error) {
	l.chip.mu.Lock()
	defer l.chip.mu.Unlock()
	v := make([]bool, len(l.offs))
	for i, o := range l.offs {
		v[i] = o == 5 && l.chip.level
	}
	return v, nil
}

func (l *jackLines) Close() error { l.once.Do(func() { close(l.closed) }); return nil }

// The sound board's jack, wired through the admin API: a plug moves the
// music to the headphones at their cap and the event feed says so; pulling
// it pauses.
func TestHeadphoneJackLine(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	levelWAV(t, filepath.Join(media, "Tag", "Folge 1.wav"), 30)
	dir := t.TempDir()
	phonesWAV := filepath.Join(dir, "phones.wav")
	chip := &jackChip{opened: make(chan struct{}, 4)}
	base, stop := startBoxWith(t, media, data, func(c *setup) {
		c.Output, c.gpio = "wav:"+filepath.Join(dir, "speaker.wav"), chip
		c.headphones.Open = func(f headphones.Found) (output.Opener, error) {
			if f.Device != headphones.JackDevice {
				t.Errorf("headphones found at %+v, want the jack", f)
			}
			return output.WAVOpener(phonesWAV, true), nil
		}
	})
	defer stop()
	c := client(t, base)
	c.do("PUT", "/api/admin/input", `{"gpio":{"buttons":[{"line":5,"action":"stop"}],"jack":{"line":5}}}`).want(t, "the jack on a button's line", 400, "gpio.jack: line 5 is a button's")
	c.ok("PUT", "/api/admin/input", `{"gpio":{"jack":{"line":5}}}`)
	<-chip.opened
	ids := folderIDsByName(t, base)
	c.command(`{"action":"folder","folder_id":"` + ids["Tag"] + `"}`)
	waitStatus(t, c, "playing", func(st map[string]any) bool { return st["position"].(float64) > 0.2 })
	events := openStream(t, base, "")

	chip.set(true)
	events.until(t, "the output event", func(ev sseEvent) bool {
		return ev.Event == "output" && ev.Data == `{"output":"headphones"}`
	})
	st := waitStatus(t, c, "the headphones", func(st map[string]any) bool { return st["output"] == "headphones" })
	if st["max_volume"] != 60.0 || st["volume"].(float64) > 60 || st["state"] != "playing" {
		t.Errorf("on the headphones: max %v volume %v state %v", st["max_volume"], st["volume"], st["state"])
	}
	chip.set(false)
	events.until(t, "the output event", func(ev sseEvent) bool {
		return ev.Event == "output" && ev.Data == `{"output":"speaker"}`
	})
	st = waitStatus(t, c, "the speaker", func(st map[string]any) bool { return st["output"] == "speaker" })
	if st["state"] != "paused" {
		t.Errorf("the jack's plug pulled: state %v, want paused", st["state"])
	}
	if lines := c.do("GET", "/api/admin/input", "").body["status"].(map[string]any)["gpio"].(map[string]any)["lines"].([]any); len(lines) != 1 || lines[0] != 5.0 {
		t.Errorf("gpio lines %v, want the jack's", lines)
	}
}
