// Package wifisetup is the touch screen's Wi-Fi setup: the list of
// networks in reach, the passphrase keyboard and the join, through netd.
// The display hosts it as a screen of its own: it asks Offer whether its
// home screen shows the Wi-Fi button, shows View and Draw while the setup
// is open, and hands back the taps on the targets Draw returned.
package wifisetup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/playerd/internal/lang"
)

// Network is the part of netd the Wi-Fi setup screen uses: the same calls
// as the /api/connectivity/wifi routes, so a join from the screen is the
// join of POST /api/connectivity/wifi/connect.
type Network interface {
	Status(ctx context.Context) (netapi.Status, error)
	Scan(ctx context.Context, iface string) (netapi.Scan, error)
	Connect(ctx context.Context, req netapi.Connect) (netapi.Connected, error)
}

// Options configure a Setup.
type Options struct {
	Network Network // required
	Now     func() time.Time
	// Changed hears that the screen changed without a tap: netd answered
	// a scan or a join. The display draws again.
	Changed func()
	// Run runs a netd call (a join takes up to 20 s); nil: on a goroutine
	// of its own. Tests run them inline.
	Run func(func())
}

// Setup is the Wi-Fi setup screen. Its methods are safe for concurrent use.
type Setup struct {
	o Options

	mu    sync.Mutex
	st    *state // nil while closed
	gen   uint64
	queue []func() // netd calls a tap asked for

	omu   sync.Mutex // guards the offer
	netAt time.Time
	offer bool
	stale atomic.Bool // ask netd at the next Offer
}

// New prepares the setup screen, closed.
func New(o Options) *Setup {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Changed == nil {
		o.Changed = func() {}
	}
	if o.Run == nil {
		o.Run = func(f func()) { go f() }
	}
	return &Setup{o: o}
}

type stage int

const (
	stageList    stage = iota // scanned networks
	stageKeys                 // the passphrase keyboard
	stageJoining              // waiting for netd
	stageJoined
	stageFailed
)

// state is the setup screen while it is open; guarded by Setup.mu. The
// passphrase lives here and in the view only: it is never logged, and
// Redacted masks it.
type state struct {
	gen      uint64 // answers of an earlier opening are dropped
	stage    stage
	scanning bool
	scanErr  string
	nets     []netapi.Network
	page     int
	ssid     string
	pass     []byte
	shift    bool
	symbols  bool
	show     bool
	err      string // why the join failed, in netd's words
}

// perPage is how many networks a page of the list shows.
const perPage = 4

// netEvery is how often netd's state is read for the home screen's Wi-Fi
// button, at most.
const netEvery = 5 * time.Second

// callLimit bounds a scan or join from the screen; netclient's own limits
// are shorter.
const callLimit = 40 * time.Second

// Offer reports whether the home screen offers Wi-Fi setup: netd answers
// and the box is neither connected nor without an adapter (then there is
// nothing the screen could set up). netd is asked at most every netEvery,
// and again after a join or when the setup closed.
func (s *Setup) Offer(ctx context.Context) bool {
	s.omu.Lock()
	defer s.omu.Unlock()
	now := s.o.Now()
	if !s.netAt.IsZero() && now.Sub(s.netAt) < netEvery && !s.stale.Swap(false) {
		return s.offer
	}
	s.netAt = now
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := s.o.Network.Status(ctx)
	s.offer = err == nil && st.State != netapi.StateConnected && st.State != netapi.StateNoAdapter
	return s.offer
}

// Tap acts on a tap of a target Draw returned (or of the home screen's
// button, Open). netd calls run through Options.Run, after the state
// changed, and draw their result with Options.Changed.
func (s *Setup) Tap(a Action) {
	s.mu.Lock()
	s.tap(a)
	q := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, f := range q {
		s.o.Run(f)
	}
}

// tap changes the state; called with mu held.
func (s *Setup) tap(act Action) {
	w := s.st
	switch act.kind {
	case actOpen:
		s.gen++
		s.st = &state{gen: s.gen}
		s.startScan(s.st)
		return
	case actClose:
		if w != nil {
			wipe(w)
		}
		s.st = nil
		s.stale.Store(true)
		return
	}
	if w == nil {
		return
	}
	switch act.kind {
	case actRescan:
		if !w.scanning {
			s.startScan(w)
		}
	case actPage:
		w.page = max(0, min(w.page+act.n, (len(w.nets)-1)/perPage))
	case actPick:
		if act.n < 0 || act.n >= len(w.nets) {
			return
		}
		n := w.nets[act.n]
		wipe(w)
		w.ssid, w.err, w.show, w.shift, w.symbols = n.SSID, "", false, false, false
		if n.Security == "open" {
			s.startJoin(w)
			return
		}
		w.stage = stageKeys
	case actKey:
		s.key(w, keyKind(act.n), act.s)
	case actRetry:
		w.stage, w.err = stageKeys, ""
	case actBack:
		wipe(w)
		w.stage, w.err = stageList, ""
	}
}

func (s *Setup) key(w *state, k keyKind, ch string) {
	if w.stage != stageKeys {
		return
	}
	switch k {
	case keyChar, keySpace:
		if len(w.pass) < maxPass {
			w.pass = append(w.pass, ch...)
		}
	case keyBack:
		if len(w.pass) > 0 {
			w.pass[len(w.pass)-1] = 0
			w.pass = w.pass[:len(w.pass)-1]
		}
	case keyShift:
		w.shift = !w.shift
	case keyMode:
		w.symbols = !w.symbols
	case keyShow:
		w.show = !w.show
	case keyCancel:
		wipe(w)
		w.stage = stageList
	case keyConnect:
		s.startJoin(w)
	}
}

// maxPass is the longest passphrase WPA takes (64 hex digits).
const maxPass = 64

func wipe(w *state) {
	clear(w.pass)
	w.pass = w.pass[:0]
}

// startScan asks netd for the networks in reach. Called with mu held.
func (s *Setup) startScan(w *state) {
	w.scanning, w.scanErr = true, ""
	gen := w.gen
	s.queue = append(s.queue, func() {
		ctx, cancel := context.WithTimeout(context.Background(), callLimit)
		defer cancel()
		sc, err := s.o.Network.Scan(ctx, "")
		s.mu.Lock()
		if w := s.st; w != nil && w.gen == gen {
			w.scanning = false
			if err != nil {
				w.scanErr = faultMsg(err)
			} else {
				w.nets = visible(sc.Networks)
				w.page = 0
			}
		}
		s.mu.Unlock()
		s.o.Changed()
	})
}

// startJoin hands the chosen network and passphrase to netd. Called with
// mu held.
func (s *Setup) startJoin(w *state) {
	w.stage, w.err = stageJoining, ""
	req := netapi.Connect{SSID: w.ssid, Password: string(w.pass)}
	gen := w.gen
	s.queue = append(s.queue, func() {
		ctx, cancel := context.WithTimeout(context.Background(), callLimit)
		defer cancel()
		_, err := s.o.Network.Connect(ctx, req)
		s.mu.Lock()
		if w := s.st; w != nil && w.gen == gen && w.stage == stageJoining {
			if err != nil {
				w.stage, w.err = stageFailed, faultMsg(err)
			} else {
				w.stage = stageJoined
				wipe(w)
			}
		}
		s.mu.Unlock()
		s.stale.Store(true)
		s.o.Changed()
	})
}

// faultMsg is what the parent reads of a failure: netd's own words (they
// never quote a passphrase), or a plain "not reachable".
func faultMsg(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) && fe.Msg != "" {
		return fe.Msg
	}
	return "network service unavailable"
}

// visible drops hidden networks (no name to tap) and keeps netd's order,
// strongest first.
func visible(ns []netapi.Network) []netapi.Network {
	out := make([]netapi.Network, 0, len(ns))
	for _, n := range ns {
		if strings.TrimSpace(n.SSID) != "" {
			out = append(out, n)
		}
	}
	return out
}

// View is what the setup screen shows in the language l, or nil while it
// is closed. Two equal views draw the same pixels.
func (s *Setup) View(l lang.Lang) *View {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.st
	if w == nil {
		return nil
	}
	v := &View{stage: w.stage, scanning: w.scanning, scanErr: w.scanErr, err: w.err, ssid: w.ssid,
		pass: string(w.pass), show: w.show, shift: w.shift, symbols: w.symbols, page: w.page,
		pages: max(1, (len(w.nets)+perPage-1)/perPage), lang: l}
	for i := w.page * perPage; i < min(len(w.nets), (w.page+1)*perPage); i++ {
		n := w.nets[i]
		v.nets = append(v.nets, network{index: i, ssid: n.SSID, bars: bars(n.SignalPercent),
			lock: n.Security != "open", connected: n.Connected})
	}
	return v
}

// bars is the signal as 1 to 4 bars.
func bars(percent int) int {
	switch {
	case percent >= 75:
		return 4
	case percent >= 50:
		return 3
	case percent >= 25:
		return 2
	}
	return 1
}

// actKind is what a tap on the setup screen does.
type actKind int

const (
	actNone   actKind = iota // swallow the tap (under a card)
	actOpen                  // open the Wi-Fi setup screen
	actClose                 // close it
	actRescan                // scan again
	actPage                  // move the list by n pages
	actPick                  // network n of the scan
	actKey                   // keyboard key: kind n, character s
	actRetry                 // back to the keyboard after a failed join
	actBack                  // back to the list after a failed join
)

// Action is what a tap on a target of the setup screen does; the display
// keeps it with the target and hands it to Tap.
type Action struct {
	kind actKind
	n    int
	s    string
}

// Open is the action of the home screen's Wi-Fi button.
func Open() Action { return Action{kind: actOpen} }

// String names the action, for tests and logs: "pick 2", "key char a",
// "key connect". It never holds more than one typed character.
func (a Action) String() string {
	switch a.kind {
	case actOpen:
		return "open"
	case actClose:
		return "close"
	case actRescan:
		return "rescan"
	case actPage:
		return fmt.Sprintf("page %+d", a.n)
	case actPick:
		return fmt.Sprintf("pick %d", a.n)
	case actKey:
		if keyKind(a.n) == keyChar {
			return "key char " + a.s
		}
		return "key " + keyKind(a.n).String()
	case actRetry:
		return "retry"
	case actBack:
		return "back"
	}
	return "none"
}
