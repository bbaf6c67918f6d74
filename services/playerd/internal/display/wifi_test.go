package display

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"strings"
	"sync"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
)

// fakeNet is netd as the screen sees it: a status, a scan, and joins that
// succeed only with the right passphrase.
type fakeNet struct {
	mu       sync.Mutex
	state    string
	nets     []netapi.Network
	pass     map[string]string // ssid → passphrase
	joins    []netapi.Connect
	statusEr error
}

func (f *fakeNet) Status(context.Context) (netapi.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return netapi.Status{State: f.state}, f.statusEr
}

func (f *fakeNet) Scan(context.Context, string) (netapi.Scan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return netapi.Scan{Interface: "wlan0", Networks: f.nets}, nil
}

func (f *fakeNet) Connect(_ context.Context, req netapi.Connect) (netapi.Connected, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.joins = append(f.joins, req)
	if want, ok := f.pass[req.SSID]; !ok || want != req.Password {
		return netapi.Connected{}, fault.New(fault.Upstream, "could not join %q: wrong password, or the network is out of reach", req.SSID)
	}
	f.state = netapi.StateConnected
	return netapi.Connected{Connected: true, SSID: req.SSID, Interface: "wlan0"}, nil
}

func newFakeNet() *fakeNet {
	pct := func(p int) int { return p }
	return &fakeNet{
		state: netapi.StateDisconnected,
		nets: []netapi.Network{
			{SSID: "Familie Müller", SignalPercent: pct(92), Security: "wpa2"},
			{SSID: "FRITZ!Box 7590 XY", SignalPercent: pct(61), Security: "wpa2/wpa3"},
			{SSID: "Café Gast", SignalPercent: pct(40), Security: "open"},
			{SSID: "", SignalPercent: pct(35), Security: "wpa2"}, // hidden
			{SSID: "Nachbar", SignalPercent: pct(12), Security: "wpa3"},
			{SSID: "DIRECT-printer", SignalPercent: pct(8), Security: "wpa2"},
		},
		pass: map[string]string{"Familie Müller": "Sommer 2026!", "Café Gast": ""},
	}
}

// newWifiDisplay is a test display with netd; its netd calls run inline,
// so every tap has its answer drawn when Tap returns.
func newWifiDisplay(t *testing.T, n *fakeNet) *Display {
	t.Helper()
	d, _ := newTestDisplay(t, newFakePlayer(idleStatus()), func(o *Options) { o.Network = n })
	d.runAsync = func(f func()) { f() }
	snap(t, d)
	return d
}

// typeText taps the keys of s on the keyboard on screen, switching shift
// and symbols as a parent would.
func typeText(t *testing.T, d *Display, s string) {
	t.Helper()
	for _, c := range s {
		ch := string(c)
		for range 3 { // at most: symbols off/on, shift
			if tapKey(d, func(a action) bool {
				return keyKind(a.n) == keyChar && a.s == ch || ch == " " && keyKind(a.n) == keySpace
			}) {
				break
			}
			d.mu.Lock()
			w := *d.wifi
			d.mu.Unlock()
			isLetter := strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", c)
			switch {
			case isLetter && w.symbols, !isLetter && !strings.ContainsRune(digitRow, c) && !w.symbols:
				tapKey(d, func(a action) bool { return keyKind(a.n) == keyMode })
			default:
				tapKey(d, func(a action) bool { return keyKind(a.n) == keyShift })
			}
		}
	}
}

func tapKey(d *Display, match func(action) bool) bool {
	d.rmu.Lock()
	var p image.Point
	found := false
	for _, tg := range d.targets {
		if tg.act.kind == actWifiKey && match(tg.act) {
			p, found = tg.r.Min.Add(tg.r.Max).Div(2), true
			break
		}
	}
	d.rmu.Unlock()
	if found {
		if err := d.Tap(context.Background(), p); err != nil {
			panic(err)
		}
	}
	return found
}

func wifiNow(d *Display) wifiState {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.wifi == nil {
		return wifiState{stage: -1}
	}
	w := *d.wifi
	w.pass = append([]byte(nil), w.pass...)
	return w
}

func TestWifiButtonOnlyWhileUnconnected(t *testing.T) {
	has := func(d *Display) bool {
		snap(t, d)
		d.rmu.Lock()
		defer d.rmu.Unlock()
		_, ok := findTarget(d.targets, actWifiOpen)
		return ok
	}
	// Without netd: no button at all.
	d, _ := newTestDisplay(t, newFakePlayer(idleStatus()), nil)
	if has(d) {
		t.Error("Wi-Fi button shown without netd")
	}
	for _, tc := range []struct {
		state string
		err   error
		want  bool
	}{
		{netapi.StateDisconnected, nil, true},
		{netapi.StateConnecting, nil, true},
		{netapi.StateConnected, nil, false},
		{netapi.StateNoAdapter, nil, false},
		{"", fault.New(fault.Unavailable, "netd down"), false},
	} {
		n := newFakeNet()
		n.state, n.statusEr = tc.state, tc.err
		if got := has(newWifiDisplay(t, n)); got != tc.want {
			t.Errorf("state %q err %v: button shown %v, want %v", tc.state, tc.err, got, tc.want)
		}
	}
}

func findTarget(ts []target, k actionKind) (target, bool) {
	for _, tg := range ts {
		if tg.act.kind == k {
			return tg, true
		}
	}
	return target{}, false
}

func TestWifiJoinWithPassphrase(t *testing.T) {
	n := newFakeNet()
	d := newWifiDisplay(t, n)
	tapAt(t, d, "Wi-Fi button", actWifiOpen)
	w := wifiNow(d)
	if w.stage != wifiList || w.scanning || len(w.nets) != 5 {
		t.Fatalf("after opening: stage %v scanning %v %d networks, want the list of 5 named ones", w.stage, w.scanning, len(w.nets))
	}
	tapWhere(t, d, "first network", func(a action) bool { return a.kind == actWifiPick && a.n == 0 })
	if w := wifiNow(d); w.stage != wifiKeys || w.ssid != "Familie Müller" {
		t.Fatalf("after picking: stage %v ssid %q, want the keyboard for Familie Müller", w.stage, w.ssid)
	}
	// A typo, corrected with backspace.
	typeText(t, d, "Sommer 2026!x")
	tapKey(d, func(a action) bool { return keyKind(a.n) == keyBack })
	if got := string(wifiNow(d).pass); got != "Sommer 2026!" {
		t.Fatalf("typed %q", got)
	}
	tapKey(d, func(a action) bool { return keyKind(a.n) == keyConnect })
	if w := wifiNow(d); w.stage != wifiJoined || len(w.pass) != 0 {
		t.Fatalf("after connect: stage %v, %d bytes of passphrase kept; want joined and wiped", w.stage, len(w.pass))
	}
	if len(n.joins) != 1 || n.joins[0] != (netapi.Connect{SSID: "Familie Müller", Password: "Sommer 2026!"}) {
		t.Fatalf("joins %+v", n.joins)
	}
	tapAt(t, d, "done", actWifiClose)
	if w := wifiNow(d); w.stage != -1 {
		t.Fatalf("still open: %v", w.stage)
	}
	snap(t, d)
	d.rmu.Lock()
	_, ok := findTarget(d.targets, actWifiOpen)
	d.rmu.Unlock()
	if ok {
		t.Error("Wi-Fi button still shown once connected")
	}
}

func TestWifiWrongPassphrase(t *testing.T) {
	n := newFakeNet()
	d := newWifiDisplay(t, n)
	tapAt(t, d, "Wi-Fi button", actWifiOpen)
	tapWhere(t, d, "first network", func(a action) bool { return a.kind == actWifiPick && a.n == 0 })
	typeText(t, d, "sommer")
	tapKey(d, func(a action) bool { return keyKind(a.n) == keyConnect })
	w := wifiNow(d)
	if w.stage != wifiFailed || !strings.Contains(w.err, "wrong password") {
		t.Fatalf("stage %v err %q, want failed with netd's reason", w.stage, w.err)
	}
	// Try again keeps what was typed, to fix a typo.
	tapAt(t, d, "try again", actWifiRetry)
	if w := wifiNow(d); w.stage != wifiKeys || string(w.pass) != "sommer" {
		t.Fatalf("retry: stage %v", w.stage)
	}
	tapKey(d, func(a action) bool { return keyKind(a.n) == keyCancel })
	if w := wifiNow(d); w.stage != wifiList || len(w.pass) != 0 {
		t.Fatalf("cancel: stage %v, %d bytes kept", w.stage, len(w.pass))
	}
}

func TestWifiOpenNetworkJoinsWithoutKeyboard(t *testing.T) {
	n := newFakeNet()
	d := newWifiDisplay(t, n)
	tapAt(t, d, "Wi-Fi button", actWifiOpen)
	tapWhere(t, d, "open network", func(a action) bool { return a.kind == actWifiPick && a.n == 2 })
	if w := wifiNow(d); w.stage != wifiJoined {
		t.Fatalf("stage %v err %q", w.stage, w.err)
	}
	if len(n.joins) != 1 || n.joins[0].SSID != "Café Gast" || n.joins[0].Password != "" {
		t.Fatalf("joins %+v", n.joins)
	}
}

func TestWifiListPages(t *testing.T) {
	d := newWifiDisplay(t, newFakeNet())
	tapAt(t, d, "Wi-Fi button", actWifiOpen)
	tapAt(t, d, "next page", actWifiPage)
	snap(t, d)
	d.rmu.Lock()
	var picks []int
	for _, tg := range d.targets {
		if tg.act.kind == actWifiPick {
			picks = append(picks, tg.act.n)
		}
	}
	d.rmu.Unlock()
	if len(picks) != 1 || picks[0] != 4 {
		t.Fatalf("page 2 offers networks %v, want [4]", picks)
	}
}

// TestKeyboardCoversPassphraseAlphabet: every printable ASCII character a
// WPA passphrase may hold is on one of the keyboard's pages, once.
func TestKeyboardCoversPassphraseAlphabet(t *testing.T) {
	for _, lang := range []string{"de", "en"} {
		seen := map[string]int{}
		for _, mode := range [][2]bool{{false, false}, {false, true}, {true, false}} {
			for _, row := range keyRows(lang, mode[0], mode[1]) {
				for _, k := range row {
					if k.kind == keyChar {
						seen[k.ch]++
					}
				}
			}
		}
		for c := byte(0x21); c < 0x7f; c++ {
			want := 1
			if c >= '0' && c <= '9' {
				want = 3 // the digit row is on every page
			}
			if seen[string(c)] != want {
				t.Errorf("%s: %q is on %d pages, want %d", lang, c, seen[string(c)], want)
			}
		}
	}
}

// TestKeyboardLayout: at 800×480 the keys are large, inside the area, do
// not overlap, and a tap on each key's centre hits that key only.
func TestKeyboardLayout(t *testing.T) {
	_, area := wifiKeysLayout(image.Rect(0, 0, 800, 480))
	for _, mode := range [][2]bool{{false, false}, {false, true}, {true, false}} {
		ks := layoutKeys(area, keyRows("de", mode[0], mode[1]), textsByLang["de"], mode[0])
		for i, k := range ks {
			if !k.r.In(area) {
				t.Errorf("key %q %v outside %v", k.label, k.r, area)
			}
			if k.r.Dx() < 56 || k.r.Dy() < 64 {
				t.Errorf("key %q is %dx%d, want at least 56x64", k.label, k.r.Dx(), k.r.Dy())
			}
			for _, o := range ks[i+1:] {
				if k.r.Overlaps(o.r) {
					t.Errorf("keys %q and %q overlap", k.label, o.label)
				}
			}
			got, ok := keyAt(ks, k.r.Min.Add(k.r.Max).Div(2))
			if !ok || got.r != k.r {
				t.Errorf("tap on %q hit %q", k.label, got.label)
			}
		}
		// The gap between keys is no key.
		if _, ok := keyAt(ks, image.Pt(ks[0].r.Max.X+keyGap/2, ks[0].r.Min.Y+10)); ok {
			t.Error("the gap between two keys hit a key")
		}
	}
}

// TestWifiPassphraseNotInScreenshot: the screen may show the passphrase
// (Show), the screenshot never does; it shows the dots of a hidden one.
func TestWifiPassphraseNotInScreenshot(t *testing.T) {
	d := newWifiDisplay(t, newFakeNet())
	tapAt(t, d, "Wi-Fi button", actWifiOpen)
	tapWhere(t, d, "first network", func(a action) bool { return a.kind == actWifiPick && a.n == 0 })
	typeText(t, d, "geheim99")
	hidden := snap(t, d)
	tapKey(d, func(a action) bool { return keyKind(a.n) == keyShow })
	shown := snap(t, d)
	if diffPixels(hidden, shown, hidden.Bounds()) < 200 {
		t.Fatal("showing the passphrase did not change the screen")
	}
	data, err := d.Screenshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	shot, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	field, _ := wifiKeysLayout(shown.Bounds())
	if n := diffPixels(shot, hidden, field); n > 0 {
		t.Errorf("screenshot's passphrase field differs from the hidden one in %d pixels", n)
	}
	if n := diffPixels(shot, shown, field); n < 200 {
		t.Errorf("screenshot shows the passphrase (%d pixels differ from the screen)", n)
	}
	// Only the field is redacted: the screen stays as it is.
	if n := diffPixels(snap(t, d), shown, shown.Bounds()); n != 0 {
		t.Errorf("the screenshot changed the screen in %d pixels", n)
	}
}

func TestGoldenWifi(t *testing.T) {
	open := func(t *testing.T, d *Display) { tapAt(t, d, "Wi-Fi button", actWifiOpen) }
	pick := func(t *testing.T, d *Display) {
		open(t, d)
		tapWhere(t, d, "first network", func(a action) bool { return a.kind == actWifiPick && a.n == 0 })
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, d *Display)
	}{
		{"home_wifi_button", func(*testing.T, *Display) {}},
		{"wifi_list", open},
		{"wifi_keyboard", func(t *testing.T, d *Display) { pick(t, d); typeText(t, d, "Sommer") }},
		{"wifi_keyboard_symbols_shown", func(t *testing.T, d *Display) {
			pick(t, d)
			typeText(t, d, "Sommer 2026!")
			tapKey(d, func(a action) bool { return keyKind(a.n) == keyShow })
		}},
		{"wifi_failed", func(t *testing.T, d *Display) {
			pick(t, d)
			typeText(t, d, "falsch12")
			tapKey(d, func(a action) bool { return keyKind(a.n) == keyConnect })
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newWifiDisplay(t, newFakeNet())
			tc.setup(t, d)
			checkGolden(t, tc.name, snap(t, d))
		})
	}
}
