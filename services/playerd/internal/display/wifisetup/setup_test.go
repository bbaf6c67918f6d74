package wifisetup

import (
	"context"
	"flag"
	"image"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/playerd/internal/display/displaytest"
	"github.com/storybox/storybox/services/playerd/internal/display/paint"
	"github.com/storybox/storybox/services/playerd/internal/lang"
)

var update = flag.Bool("update", false, "rewrite the golden images in testdata/")

// fakeNet is netd as the screen sees it: a status, a scan, and joins that
// succeed only with the right passphrase.
type fakeNet struct {
	mu       sync.Mutex
	state    string
	nets     []netapi.Network
	pass     map[string]string // ssid → passphrase
	joins    []netapi.Connect
	statusEr error
	asked    int // Status calls
}

func (f *fakeNet) Status(context.Context) (netapi.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
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
	return &fakeNet{
		state: netapi.StateDisconnected,
		nets: []netapi.Network{
			{SSID: "Familie Müller", SignalPercent: 92, Security: "wpa2"},
			{SSID: "FRITZ!Box 7590 XY", SignalPercent: 61, Security: "wpa2/wpa3"},
			{SSID: "Café Gast", SignalPercent: 40, Security: "open"},
			{SSID: "", SignalPercent: 35, Security: "wpa2"}, // hidden
			{SSID: "Nachbar", SignalPercent: 12, Security: "wpa3"},
			{SSID: "DIRECT-printer", SignalPercent: 8, Security: "wpa2"},
		},
		pass: map[string]string{"Familie Müller": "Sommer 2026!", "Café Gast": ""},
	}
}

// screen hosts a Setup as the display does, at 800×480: it draws the view
// and taps the targets it drew. netd calls run inline, so every tap has its
// answer drawn when tap returns.
type screen struct {
	t       testing.TB
	s       *Setup
	f       *paint.Faces
	lang    lang.Lang
	targets []Target
	changed int
}

func newScreen(t testing.TB, n *fakeNet) *screen {
	t.Helper()
	f, err := paint.LoadFaces()
	if err != nil {
		t.Fatal(err)
	}
	sc := &screen{t: t, f: f, lang: lang.German}
	sc.s = New(Options{Network: n, Changed: func() { sc.changed++ }, Run: func(f func()) { f() }})
	sc.s.Tap(Open())
	return sc
}

func (sc *screen) draw() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 800, 480))
	paint.Fill(img, img.Rect, paint.ColBackground)
	sc.targets = nil
	if v := sc.s.View(sc.lang); v != nil {
		sc.targets = Draw(img, sc.f, img.Rect, v)
	}
	return img
}

// tap taps the centre of the topmost target whose action is named so.
func (sc *screen) tap(name string) bool {
	sc.draw()
	for i := len(sc.targets) - 1; i >= 0; i-- {
		if tg := sc.targets[i]; tg.Act.String() == name {
			sc.s.Tap(tg.Act)
			return true
		}
	}
	return false
}

func (sc *screen) mustTap(name string) {
	sc.t.Helper()
	if !sc.tap(name) {
		sc.t.Fatalf("no %q on screen", name)
	}
}

// typeText taps the keys of s on the keyboard on screen, switching shift
// and symbols as a parent would.
func (sc *screen) typeText(s string) {
	sc.t.Helper()
	for _, c := range s {
		name := "key char " + string(c)
		if c == ' ' {
			name = "key space"
		}
		for range 3 { // at most: symbols off/on, shift
			if sc.tap(name) {
				break
			}
			w := sc.now()
			isLetter := strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", c)
			switch {
			case isLetter && w.symbols, !isLetter && !strings.ContainsRune(digitRow, c) && !w.symbols:
				sc.mustTap("key mode")
			default:
				sc.mustTap("key shift")
			}
		}
	}
}

// now is a copy of the state; stage -1 when closed.
func (sc *screen) now() state {
	sc.s.mu.Lock()
	defer sc.s.mu.Unlock()
	if sc.s.st == nil {
		return state{stage: -1}
	}
	w := *sc.s.st
	w.pass = append([]byte(nil), w.pass...)
	return w
}

func TestOffer(t *testing.T) {
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
		if got := New(Options{Network: n}).Offer(context.Background()); got != tc.want {
			t.Errorf("state %q err %v: offered %v, want %v", tc.state, tc.err, got, tc.want)
		}
	}
}

// TestOfferAsksNetdSeldom: netd is asked once per netEvery, and again at
// once after a join.
func TestOfferAsksNetdSeldom(t *testing.T) {
	n := newFakeNet()
	now := time.Date(2026, 11, 28, 18, 0, 0, 0, time.UTC)
	s := New(Options{Network: n, Now: func() time.Time { return now }, Run: func(f func()) { f() }})
	ctx := context.Background()
	s.Offer(ctx)
	s.Offer(ctx)
	if n.asked != 1 {
		t.Fatalf("netd asked %d times within %v, want 1", n.asked, netEvery)
	}
	now = now.Add(netEvery)
	s.Offer(ctx)
	if n.asked != 2 {
		t.Fatalf("netd asked %d times after %v, want 2", n.asked, netEvery)
	}
	s.Tap(Open())
	s.Tap(Action{kind: actPick, n: 2}) // the open network: joined at once
	if s.Offer(ctx) || n.asked != 3 {
		t.Fatalf("after the join: asked %d times (want 3), still offered", n.asked)
	}
}

func TestJoinWithPassphrase(t *testing.T) {
	n := newFakeNet()
	sc := newScreen(t, n)
	w := sc.now()
	if w.stage != stageList || w.scanning || len(w.nets) != 5 {
		t.Fatalf("after opening: stage %v scanning %v %d networks, want the list of 5 named ones", w.stage, w.scanning, len(w.nets))
	}
	if sc.changed == 0 {
		t.Error("the scan's answer was not reported as a change")
	}
	sc.mustTap("pick 0")
	if w := sc.now(); w.stage != stageKeys || w.ssid != "Familie Müller" {
		t.Fatalf("after picking: stage %v ssid %q, want the keyboard for Familie Müller", w.stage, w.ssid)
	}
	// A typo, corrected with backspace.
	sc.typeText("Sommer 2026!x")
	sc.mustTap("key backspace")
	if got := string(sc.now().pass); got != "Sommer 2026!" {
		t.Fatalf("typed %q", got)
	}
	sc.mustTap("key connect")
	if w := sc.now(); w.stage != stageJoined || len(w.pass) != 0 {
		t.Fatalf("after connect: stage %v, %d bytes of passphrase kept; want joined and wiped", w.stage, len(w.pass))
	}
	if len(n.joins) != 1 || n.joins[0] != (netapi.Connect{SSID: "Familie Müller", Password: "Sommer 2026!"}) {
		t.Fatalf("joins %+v", n.joins)
	}
	sc.mustTap("close")
	if w := sc.now(); w.stage != -1 {
		t.Fatalf("still open: %v", w.stage)
	}
	if sc.s.View(lang.German) != nil {
		t.Error("a closed setup has a view")
	}
}

func TestWrongPassphrase(t *testing.T) {
	sc := newScreen(t, newFakeNet())
	sc.mustTap("pick 0")
	sc.typeText("sommer")
	sc.mustTap("key connect")
	w := sc.now()
	if w.stage != stageFailed || !strings.Contains(w.err, "wrong password") {
		t.Fatalf("stage %v err %q, want failed with netd's reason", w.stage, w.err)
	}
	// Try again keeps what was typed, to fix a typo.
	sc.mustTap("retry")
	if w := sc.now(); w.stage != stageKeys || string(w.pass) != "sommer" {
		t.Fatalf("retry: stage %v", w.stage)
	}
	sc.mustTap("key cancel")
	if w := sc.now(); w.stage != stageList || len(w.pass) != 0 {
		t.Fatalf("cancel: stage %v, %d bytes kept", w.stage, len(w.pass))
	}
}

func TestOpenNetworkJoinsWithoutKeyboard(t *testing.T) {
	n := newFakeNet()
	sc := newScreen(t, n)
	sc.mustTap("pick 2")
	if w := sc.now(); w.stage != stageJoined {
		t.Fatalf("stage %v err %q", w.stage, w.err)
	}
	if len(n.joins) != 1 || n.joins[0].SSID != "Café Gast" || n.joins[0].Password != "" {
		t.Fatalf("joins %+v", n.joins)
	}
}

func TestListPages(t *testing.T) {
	sc := newScreen(t, newFakeNet())
	sc.mustTap("page +1")
	sc.draw()
	var picks []string
	for _, tg := range sc.targets {
		if strings.HasPrefix(tg.Act.String(), "pick ") {
			picks = append(picks, tg.Act.String())
		}
	}
	if len(picks) != 1 || picks[0] != "pick 4" {
		t.Fatalf("page 2 offers %v, want [pick 4]", picks)
	}
}

// TestKeyboardCoversPassphraseAlphabet: every printable ASCII character a
// WPA passphrase may hold is on one of the keyboard's pages, once.
func TestKeyboardCoversPassphraseAlphabet(t *testing.T) {
	for _, l := range lang.All() {
		seen := map[string]int{}
		for _, mode := range [][2]bool{{false, false}, {false, true}, {true, false}} {
			for _, row := range keyRows(l, mode[0], mode[1]) {
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
				t.Errorf("%s: %q is on %d pages, want %d", l, c, seen[string(c)], want)
			}
		}
	}
}

// TestKeyboardLayout: at 800×480 the keys are large, inside the area, do
// not overlap, and a tap on each key's centre hits that key only.
func TestKeyboardLayout(t *testing.T) {
	_, area := keysLayout(image.Rect(0, 0, 800, 480))
	for _, mode := range [][2]bool{{false, false}, {false, true}, {true, false}} {
		ks := layoutKeys(area, keyRows(lang.German, mode[0], mode[1]), textsFor(lang.German), mode[0])
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

// TestRedactedHidesThePassphrase: the screen may show the passphrase
// (show), the redacted view never does; it draws the dots of a hidden one.
func TestRedactedHidesThePassphrase(t *testing.T) {
	sc := newScreen(t, newFakeNet())
	if _, ok := sc.s.View(lang.German).Redacted(); ok {
		t.Error("the list has something to redact")
	}
	sc.mustTap("pick 0")
	sc.typeText("geheim99")
	hidden := sc.draw()
	sc.mustTap("key show")
	shown := sc.draw()
	if displaytest.DiffPixels(hidden, shown, hidden.Bounds()) < 200 {
		t.Fatal("showing the passphrase did not change the screen")
	}
	v := sc.s.View(lang.German)
	r, ok := v.Redacted()
	if !ok || strings.Contains(r.pass, "geheim") {
		t.Fatalf("redacted %v, passphrase %q", ok, r.pass)
	}
	shot := image.NewRGBA(image.Rect(0, 0, 800, 480))
	paint.Fill(shot, shot.Rect, paint.ColBackground)
	Draw(shot, sc.f, shot.Rect, r)
	field, _ := keysLayout(shot.Rect)
	if n := displaytest.DiffPixels(shot, hidden, field); n > 0 {
		t.Errorf("the redacted passphrase field differs from the hidden one in %d pixels", n)
	}
	if n := displaytest.DiffPixels(shot, shown, field); n < 200 {
		t.Errorf("the redacted view shows the passphrase (%d pixels differ from the screen)", n)
	}
	if v.pass != "geheim99" || !v.show {
		t.Error("redacting changed the view it was made from")
	}
}

func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		setup func(sc *screen)
	}{
		{"wifi_list", func(*screen) {}},
		{"wifi_keyboard", func(sc *screen) { sc.mustTap("pick 0"); sc.typeText("Sommer") }},
		{"wifi_keyboard_symbols_shown", func(sc *screen) {
			sc.mustTap("pick 0")
			sc.typeText("Sommer 2026!")
			sc.mustTap("key show")
		}},
		{"wifi_failed", func(sc *screen) {
			sc.mustTap("pick 0")
			sc.typeText("falsch12")
			sc.mustTap("key connect")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := newScreen(t, newFakeNet())
			tc.setup(sc)
			displaytest.Golden(t, filepath.Join("testdata", tc.name+".png"), sc.draw(), *update)
		})
	}
}

// TestWordsInEveryLanguage: the setup has its words and a keyboard in each
// language the box decides on, so none falls back silently.
func TestWordsInEveryLanguage(t *testing.T) {
	for _, l := range lang.All() {
		if tx, ok := textsByLang[l]; !ok || tx.Title == "" || tx.Connect == "" {
			t.Errorf("no words in %s", l)
		}
		if _, ok := letterRows[l]; !ok {
			t.Errorf("no keyboard in %s", l)
		}
	}
}
