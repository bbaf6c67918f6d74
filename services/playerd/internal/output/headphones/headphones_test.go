package headphones

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
)

var (
	onboard = alsa.Device{Card: 0, Dev: 0, CardID: "Headphones", CardName: "bcm2835 Headphones", Driver: "bcm2835_headpho"}
	hdmi    = alsa.Device{Card: 1, Dev: 0, CardID: "vc4hdmi0", CardName: "vc4-hdmi-0", Driver: "vc4-hdmi"}
	usb     = alsa.Device{Card: 2, Dev: 0, CardID: "Device", CardName: "USB Audio Device", Driver: "USB-Audio"}
	usb2    = alsa.Device{Card: 3, Dev: 0, CardID: "Headset", CardName: "Logitech USB Headset", Driver: "USB-Audio"}
)

func TestDecide(t *testing.T) {
	on := Config{Enabled: true, Speaker: "alsa:Headphones"}
	for _, c := range []struct {
		name string
		cfg  Config
		devs []alsa.Device
		jack bool
		want Found
	}{
		{"no USB card", on, []alsa.Device{onboard, hdmi}, false, Found{}},
		{"a USB card", on, []alsa.Device{onboard, hdmi, usb}, false, Found{"hw:2,0 (Device)", "alsa:2,0"}},
		{"the first of two", on, []alsa.Device{onboard, usb, usb2}, false, Found{"hw:2,0 (Device)", "alsa:2,0"}},
		{"off", Config{Speaker: "alsa"}, []alsa.Device{onboard, usb}, true, Found{}},
		{"the speaker is a USB DAC", Config{Enabled: true, Speaker: "alsa:Device"}, []alsa.Device{usb}, false, Found{}},
		{"the speaker is the first card, a USB DAC", Config{Enabled: true, Speaker: "alsa"}, []alsa.Device{usb, usb2}, false, Found{"hw:3,0 (Headset)", "alsa:3,0"}},
		{"a named device", Config{Enabled: true, Speaker: "alsa:0", Device: "Headset"}, []alsa.Device{onboard, usb, usb2}, false, Found{"hw:3,0 (Headset)", "alsa:3,0"}},
		{"a named device missing", Config{Enabled: true, Speaker: "alsa:0", Device: "Headset"}, []alsa.Device{onboard, usb}, false, Found{}},
		{"the speaker is wav", Config{Enabled: true, Speaker: "wav:/tmp/x.wav"}, []alsa.Device{usb}, false, Found{"hw:2,0 (Device)", "alsa:2,0"}},
		{"jack in", Config{Enabled: true, Speaker: "alsa:0", JackWired: true}, []alsa.Device{onboard}, true, Found{JackDevice, "alsa:0"}},
		{"jack out", Config{Enabled: true, Speaker: "alsa:0", JackWired: true}, []alsa.Device{onboard}, false, Found{}},
		{"jack out, a USB card", Config{Enabled: true, Speaker: "alsa:0", JackWired: true}, []alsa.Device{onboard, usb}, false, Found{"hw:2,0 (Device)", "alsa:2,0"}},
		{"jack on its own device", Config{Enabled: true, Speaker: "alsa:0", JackWired: true, Device: "vc4-hdmi-0"}, []alsa.Device{onboard, hdmi}, true, Found{JackDevice, "alsa:vc4-hdmi-0"}},
		{"jack device present, no plug", Config{Enabled: true, Speaker: "alsa:0", JackWired: true, Device: "vc4-hdmi-0"}, []alsa.Device{onboard, hdmi}, false, Found{}},
	} {
		if got := Decide(c.cfg, c.devs, c.jack); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// fakeMachine is the sound cards and the uevents of a test.
type fakeMachine struct {
	mu     sync.Mutex
	devs   []alsa.Device
	err    error
	events chan struct{}
	looked chan struct{} // after each look at the cards
}

func (m *fakeMachine) cards() ([]alsa.Device, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.looked != nil {
		signal(m.looked)
	}
	return append([]alsa.Device(nil), m.devs...), m.err
}

func (m *fakeMachine) Changes(ctx context.Context) (<-chan struct{}, error) {
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		for {
			select {
			case <-m.events:
				signal(out)
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// set changes the cards; event sends a uevent after it.
func (m *fakeMachine) set(event bool, devs ...alsa.Device) {
	m.mu.Lock()
	m.devs = devs
	m.mu.Unlock()
	if event {
		m.events <- struct{}{}
	}
}

func startWatcher(t *testing.T, cfg Config, m *fakeMachine) (*Watcher, chan Found, chan error) {
	t.Helper()
	found, errs := make(chan Found, 16), make(chan error, 16)
	w := New(cfg, m.cards, m, func(f Found) { found <- f }, func(err error) { errs <- err })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w, found, errs
}

func next(t *testing.T, c chan Found, want Found) {
	t.Helper()
	select {
	case got := <-c:
		if got != want {
			t.Fatalf("found %+v, want %+v", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("nothing found; want %+v", want)
	}
}

// Plug, unplug, plug again; a plug that /proc/asound shows only after the
// uevent is found when the watcher looks again; the jack; switched off.
func TestWatcher(t *testing.T) {
	m := &fakeMachine{devs: []alsa.Device{onboard}, events: make(chan struct{})}
	w, found, _ := startWatcher(t, Config{Enabled: true, Speaker: "alsa:0"}, m)
	m.set(true, onboard, usb)
	next(t, found, Found{"hw:2,0 (Device)", "alsa:2,0"})
	m.set(true, onboard)
	next(t, found, Found{})
	m.set(true, onboard, usb2)
	next(t, found, Found{"hw:3,0 (Headset)", "alsa:3,0"})
	m.set(true, onboard)
	next(t, found, Found{})

	// The uevent comes first, the playback device later: the look right
	// after the uevent finds nothing, a later one finds it.
	m.mu.Lock()
	m.looked = make(chan struct{}, 1)
	m.mu.Unlock()
	m.events <- struct{}{}
	<-m.looked
	m.set(false, onboard, usb)
	next(t, found, Found{"hw:2,0 (Device)", "alsa:2,0"})

	w.Configure(Config{Enabled: false, Speaker: "alsa:0"})
	next(t, found, Found{})
	w.Configure(Config{Enabled: true, Speaker: "alsa:0", JackWired: true})
	next(t, found, Found{"hw:2,0 (Device)", "alsa:2,0"})
	m.set(true, onboard)
	next(t, found, Found{})
	w.SetJack(true)
	next(t, found, Found{JackDevice, "alsa:0"})
	w.SetJack(false)
	next(t, found, Found{})
}

// A failed look is reported and changes nothing; the next one counts.
func TestWatcherCardsUnreadable(t *testing.T) {
	m := &fakeMachine{events: make(chan struct{}), err: errors.New("no /proc")}
	_, found, errs := startWatcher(t, Config{Enabled: true, Speaker: "null"}, m)
	if err := <-errs; err == nil {
		t.Fatal("no error")
	}
	m.mu.Lock()
	m.err = nil
	m.mu.Unlock()
	m.set(true, usb)
	next(t, found, Found{"hw:2,0 (Device)", "alsa:2,0"})
}

func TestSoundEvent(t *testing.T) {
	for msg, want := range map[string]bool{
		"add@/devices/platform/usb/1-1/1-1:1.0/sound/card1\x00ACTION=add\x00DEVPATH=/devices/platform/usb/1-1/1-1:1.0/sound/card1\x00SUBSYSTEM=sound\x00SEQNUM=1234\x00": true,
		"remove@/devices/x/sound/card1/pcmC1D0p\x00ACTION=remove\x00SUBSYSTEM=sound\x00DEVNAME=snd/pcmC1D0p\x00":                                                         true,
		"add@/devices/x/input/input5\x00ACTION=add\x00SUBSYSTEM=input\x00PRODUCT=sound\x00":                                                                              false,
		"": false,
	} {
		if got := soundEvent([]byte(msg)); got != want {
			t.Errorf("%q: %v, want %v", msg, got, want)
		}
	}
}

// The kernel's socket opens and closes with its context. A sandbox
// without netlink refuses it: that is what the box logs and lives with.
func TestUeventsClose(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Uevents{}.Changes(ctx)
	if err != nil {
		cancel()
		t.Skipf("no uevent socket here: %v", err)
	}
	cancel()
	for range c {
	}
}
