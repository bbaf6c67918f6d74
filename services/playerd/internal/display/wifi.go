package display

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
)

// Network is the part of netd the Wi-Fi setup screen uses: the same calls
// as the /api/connectivity/wifi routes, so a join from the screen is the
// join of POST /api/connectivity/wifi/connect.
type Network interface {
	Status(ctx context.Context) (netapi.Status, error)
	Scan(ctx context.Context, iface string) (netapi.Scan, error)
	Connect(ctx context.Context, req netapi.Connect) (netapi.Connected, error)
}

type wifiStage int

const (
	wifiList    wifiStage = iota // scanned networks
	wifiKeys                     // the passphrase keyboard
	wifiJoining                  // waiting for netd
	wifiJoined
	wifiFailed
)

// wifiState is the setup screen while it is open; guarded by Display.mu.
// The passphrase lives here and in the view only: it is never logged, and
// Screenshot draws it masked.
type wifiState struct {
	gen      uint64 // answers of an earlier opening are dropped
	stage    wifiStage
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

// wifiRows is how many networks a page of the list shows.
const wifiRows = 4

// netEvery is how often netd's state is read for the home screen's Wi-Fi
// button, at most.
const netEvery = 5 * time.Second

// wifiCall bounds a scan or join from the screen; netclient's own limits
// are shorter.
const wifiCall = 40 * time.Second

// loadNet re-reads whether the box is connected, which decides whether the
// home screen offers Wi-Fi setup. Called with rmu held.
func (d *Display) loadNet(ctx context.Context) {
	if d.o.Network == nil {
		return
	}
	now := d.o.Now()
	if !d.netAt.IsZero() && now.Sub(d.netAt) < netEvery && !d.netStale.Swap(false) {
		return
	}
	d.netAt = now
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := d.o.Network.Status(ctx)
	// netd down or without an adapter: nothing the screen could set up.
	d.netOffer = err == nil && st.State != netapi.StateConnected && st.State != netapi.StateNoAdapter
}

// async queues a netd call; Tap starts it once mu is released, off the
// tapping goroutine (a join takes up to 20 s). Tests run it inline.
// Called with mu held.
func (d *Display) async(f func()) { d.asyncQ = append(d.asyncQ, f) }

func (d *Display) startAsync() {
	d.mu.Lock()
	q := d.asyncQ
	d.asyncQ = nil
	d.mu.Unlock()
	for _, f := range q {
		if d.runAsync != nil {
			d.runAsync(f)
		} else {
			go f()
		}
	}
}

// wifiTap acts on a tap of the setup screen. Called with mu held; netd
// calls run on their own goroutine and draw their result with a poke.
func (d *Display) wifiTap(act action) {
	w := d.wifi
	switch act.kind {
	case actWifiOpen:
		d.wifiGen++
		d.wifi = &wifiState{gen: d.wifiGen}
		d.startScan(d.wifi)
		return
	case actWifiClose:
		if w != nil {
			wipe(w)
		}
		d.wifi = nil
		d.netStale.Store(true)
		return
	}
	if w == nil {
		return
	}
	switch act.kind {
	case actWifiRescan:
		if !w.scanning {
			d.startScan(w)
		}
	case actWifiPage:
		w.page = max(0, min(w.page+act.n, (len(w.nets)-1)/wifiRows))
	case actWifiPick:
		if act.n < 0 || act.n >= len(w.nets) {
			return
		}
		n := w.nets[act.n]
		wipe(w)
		w.ssid, w.err, w.show, w.shift, w.symbols = n.SSID, "", false, false, false
		if n.Security == "open" {
			d.startJoin(w)
			return
		}
		w.stage = wifiKeys
	case actWifiKey:
		d.wifiKey(w, keyKind(act.n), act.s)
	case actWifiRetry:
		w.stage, w.err = wifiKeys, ""
	case actWifiBack:
		wipe(w)
		w.stage, w.err = wifiList, ""
	}
}

func (d *Display) wifiKey(w *wifiState, k keyKind, ch string) {
	if w.stage != wifiKeys {
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
		w.stage = wifiList
	case keyConnect:
		d.startJoin(w)
	}
}

// maxPass is the longest passphrase WPA takes (64 hex digits).
const maxPass = 64

func wipe(w *wifiState) {
	clear(w.pass)
	w.pass = w.pass[:0]
}

// startScan asks netd for the networks in reach. Called with mu held.
func (d *Display) startScan(w *wifiState) {
	w.scanning, w.scanErr = true, ""
	gen := w.gen
	d.async(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wifiCall)
		defer cancel()
		sc, err := d.o.Network.Scan(ctx, "")
		d.mu.Lock()
		if w := d.wifi; w != nil && w.gen == gen {
			w.scanning = false
			if err != nil {
				w.scanErr = faultMsg(err)
			} else {
				w.nets = visible(sc.Networks)
				w.page = 0
			}
		}
		d.mu.Unlock()
		d.poke()
	})
}

// startJoin hands the chosen network and passphrase to netd. Called with
// mu held.
func (d *Display) startJoin(w *wifiState) {
	w.stage, w.err = wifiJoining, ""
	req := netapi.Connect{SSID: w.ssid, Password: string(w.pass)}
	gen := w.gen
	d.async(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wifiCall)
		defer cancel()
		_, err := d.o.Network.Connect(ctx, req)
		d.mu.Lock()
		if w := d.wifi; w != nil && w.gen == gen && w.stage == wifiJoining {
			if err != nil {
				w.stage, w.err = wifiFailed, faultMsg(err)
			} else {
				w.stage = wifiJoined
				wipe(w)
			}
		}
		d.mu.Unlock()
		d.netStale.Store(true)
		d.poke()
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

// wifiView derives what the setup screen shows. Called with mu held.
func (d *Display) wifiView() *wifiView {
	w := d.wifi
	if w == nil {
		return nil
	}
	v := &wifiView{Stage: w.stage, Scanning: w.scanning, ScanErr: w.scanErr, Err: w.err, SSID: w.ssid,
		Pass: string(w.pass), Show: w.show, Shift: w.shift, Symbols: w.symbols, Page: w.page,
		Pages: max(1, (len(w.nets)+wifiRows-1)/wifiRows)}
	for i := w.page * wifiRows; i < min(len(w.nets), (w.page+1)*wifiRows); i++ {
		n := w.nets[i]
		v.Nets = append(v.Nets, wifiNet{Index: i, SSID: n.SSID, Bars: bars(n.SignalPercent),
			Lock: n.Security != "open", Connected: n.Connected})
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
