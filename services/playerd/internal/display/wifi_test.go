package display

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"sync"
	"testing"

	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/playerd/internal/display/wifisetup"
)

// fakeNet is netd as the screen sees it: disconnected, one network in
// reach, joins that fail. The setup's own tests try the joins.
type fakeNet struct {
	mu    sync.Mutex
	state string
}

func (f *fakeNet) Status(context.Context) (netapi.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return netapi.Status{State: f.state}, nil
}

func (f *fakeNet) Scan(context.Context, string) (netapi.Scan, error) {
	return netapi.Scan{Interface: "wlan0", Networks: []netapi.Network{{SSID: "Familie Müller", SignalPercent: 92, Security: "wpa2"}}}, nil
}

func (f *fakeNet) Connect(context.Context, netapi.Connect) (netapi.Connected, error) {
	return netapi.Connected{}, nil
}

// newWifiDisplay is a test display with netd; its netd calls run inline,
// so every tap has its answer drawn when Tap returns.
func newWifiDisplay(t *testing.T, n *fakeNet) *Display {
	t.Helper()
	d, _ := newTestDisplay(t, newFakePlayer(idleStatus()), func(o *Options) { o.Network = n })
	d.wifi = wifisetup.New(wifisetup.Options{Network: n, Now: d.o.Now, Changed: d.poke, Run: func(f func()) { f() }})
	snap(t, d)
	return d
}

// tapWifi taps the target of the Wi-Fi setup named so (wifisetup.Action's
// String).
func tapWifi(t *testing.T, d *Display, name string) {
	t.Helper()
	tapWhere(t, d, name, func(a action) bool { return a.kind == actWifi && a.wifi.String() == name })
}

func offersWifi(t *testing.T, d *Display) bool {
	snap(t, d)
	d.rmu.Lock()
	defer d.rmu.Unlock()
	for _, tg := range d.targets {
		if tg.act.kind == actWifi && tg.act.wifi == wifisetup.Open() {
			return true
		}
	}
	return false
}

// TestWifiButtonOnlyWhileOffered: the home screen has the button when the
// setup offers itself (which states do is the setup's test), never
// without netd.
func TestWifiButtonOnlyWhileOffered(t *testing.T) {
	d, _ := newTestDisplay(t, newFakePlayer(idleStatus()), nil)
	if offersWifi(t, d) {
		t.Error("Wi-Fi button shown without netd")
	}
	if !offersWifi(t, newWifiDisplay(t, &fakeNet{state: netapi.StateDisconnected})) {
		t.Error("no Wi-Fi button while disconnected")
	}
	if offersWifi(t, newWifiDisplay(t, &fakeNet{state: netapi.StateConnected})) {
		t.Error("Wi-Fi button shown while connected")
	}
}

// TestWifiHostedAsScreen: the button opens the setup over the home screen,
// whose targets no longer react; closing it brings the home screen back.
func TestWifiHostedAsScreen(t *testing.T) {
	d := newWifiDisplay(t, &fakeNet{state: netapi.StateDisconnected})
	home := snap(t, d)
	tapWifi(t, d, "open")
	open := snap(t, d)
	if diffPixels(home, open, home.Bounds()) < 10000 {
		t.Fatal("opening the setup did not change the screen")
	}
	d.rmu.Lock()
	for _, tg := range d.targets {
		if tg.act.kind != actWifi {
			t.Errorf("a target of the screen below reacts: %+v", tg.act)
		}
	}
	d.rmu.Unlock()
	tapWifi(t, d, "close")
	if n := diffPixels(home, snap(t, d), home.Bounds()); n > 0 {
		t.Errorf("after closing, %d pixels differ from the home screen", n)
	}
}

// TestWifiPassphraseNotInScreenshot: the screen may show the passphrase,
// the screenshot never does.
func TestWifiPassphraseNotInScreenshot(t *testing.T) {
	d := newWifiDisplay(t, &fakeNet{state: netapi.StateDisconnected})
	tapWifi(t, d, "open")
	tapWifi(t, d, "pick 0")
	for _, c := range "geheim99" {
		tapWifi(t, d, "key char "+string(c))
	}
	hidden := snap(t, d)
	tapWifi(t, d, "key show")
	shown := snap(t, d)
	data, err := d.Screenshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	shot, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	all := image.Rect(0, 0, 800, 480)
	if n := diffPixels(shot, hidden, all); n > 0 {
		t.Errorf("screenshot differs from the screen with the passphrase hidden in %d pixels", n)
	}
	if n := diffPixels(shot, shown, all); n < 200 {
		t.Errorf("screenshot shows the passphrase (%d pixels differ from the screen)", n)
	}
	// Only the screenshot is redacted: the screen stays as it is.
	if n := diffPixels(snap(t, d), shown, all); n != 0 {
		t.Errorf("the screenshot changed the screen in %d pixels", n)
	}
}

func TestGoldenWifiButton(t *testing.T) {
	checkGolden(t, "home_wifi_button", snap(t, newWifiDisplay(t, &fakeNet{state: netapi.StateDisconnected})))
}
