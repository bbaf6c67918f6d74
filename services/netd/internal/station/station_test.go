package station

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/netd/internal/ipconf"
	"github.com/storybox/storybox/services/netd/internal/radio"
	"github.com/storybox/storybox/services/netd/internal/radio/radiotest"
	"github.com/storybox/storybox/services/netd/internal/store"
)

// fakeAddr hands out an address on Up, as a DHCP server would.
type fakeAddr struct {
	mu    sync.Mutex
	up    map[string]bool
	downs int
}

func (f *fakeAddr) Up(iface string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.up == nil {
		f.up = map[string]bool{}
	}
	f.up[iface] = true
}

func (f *fakeAddr) Down(iface string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.up, iface)
	f.downs++
	return nil
}

func (f *fakeAddr) downCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.downs
}

func (f *fakeAddr) Addrs(iface string) ipconf.Addr {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.up[iface] {
		return ipconf.Addr{CIDRs: []string{"fe80::1/64"}}
	}
	return ipconf.Addr{CIDRs: []string{"192.168.1.23/24", "fe80::1/64"}, IPv4: "192.168.1.23", Gateway: "192.168.1.1"}
}

type rig struct {
	radio *radiotest.Radio
	store *store.Store
	addr  *fakeAddr
	st    *Station
}

func start(t *testing.T, offload bool, known ...store.Network) *rig {
	t.Helper()
	return startWith(t, offload, nil, known...)
}

// startWith puts aps in reach before the station starts, for tests that
// must not race its first scan.
func startWith(t *testing.T, offload bool, aps []radiotest.AP, known ...store.Network) *rig {
	t.Helper()
	r := &rig{radio: radiotest.New(offload), addr: &fakeAddr{}}
	for _, ap := range aps {
		r.radio.Put(ap)
	}
	var err error
	if r.store, err = store.Open(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, n := range known {
		if err := r.store.Put(n); err != nil {
			t.Fatal(err)
		}
	}
	r.st = New(Config{Radio: r.radio, Store: r.store, Addr: r.addr, Country: "DE",
		Poll: 5 * time.Millisecond, JoinTimeout: 300 * time.Millisecond, RetryMin: 10 * time.Millisecond, RetryMax: 40 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.st.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// wait polls the status until ok holds; the deadline only bounds a hang.
func (r *rig) wait(t *testing.T, what string, ok func(netapi.Status) bool) netapi.Status {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := r.st.Status()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: status %+v", what, st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func connectedTo(ssid string) func(netapi.Status) bool {
	return func(st netapi.Status) bool {
		return st.State == netapi.StateConnected && st.SSID == ssid && st.IPv4 != nil
	}
}

var bssid = net.HardwareAddr{0x02, 0xaa, 0, 0, 0, 1}

// A known network in reach is joined and gets an address; when its access
// point goes (a router rebooting) the box notices, drops the address, and
// joins again once the access point is back.
func TestJoinDropReconnect(t *testing.T) {
	r := start(t, true, store.Network{SSID: "home", PSK: "correct horse"})
	r.radio.Put(radiotest.AP{SSID: "home", BSSID: bssid, SignalDBM: -55, Security: radio.WPA2, PSK: "correct horse"})
	st := r.wait(t, "the join", connectedTo("home"))
	if *st.Gateway != "192.168.1.1" || st.BSSID != bssid.String() || *st.SignalDBM != -55 || *st.SignalPercent != 78 || st.Country != "DE" {
		t.Errorf("status %+v", st)
	}

	r.radio.Remove("home")
	st = r.wait(t, "the drop", func(st netapi.Status) bool { return st.State == netapi.StateDisconnected })
	if st.IPv4 != nil || !strings.Contains(st.LastError, "lost") || st.NextAttempt == nil {
		t.Errorf("after the drop: %+v", st)
	}
	r.addr.mu.Lock()
	downs := r.addr.downs
	r.addr.mu.Unlock()
	if downs == 0 {
		t.Error("the address was not taken away")
	}
	r.radio.Put(radiotest.AP{SSID: "home", BSSID: bssid, SignalDBM: -60, Security: radio.WPA2, PSK: "correct horse"})
	st = r.wait(t, "the reconnect", connectedTo("home"))
	if st.LastError != "" || st.NextAttempt != nil {
		t.Errorf("after the reconnect: %+v", st)
	}
}

// A wrong passphrase fails the request with an upstream error (502) and
// saves nothing; the right one joins and is saved, and never shows again.
func TestConnectWrongPassphrase(t *testing.T) {
	r := start(t, true)
	r.radio.Put(radiotest.AP{SSID: "home", BSSID: bssid, SignalDBM: -50, Security: radio.WPA2, PSK: "right passphrase"})
	r.wait(t, "the adapter", func(st netapi.Status) bool { return st.State == netapi.StateDisconnected })
	ctx := context.Background()
	err := r.st.Connect(ctx, netapi.Connect{SSID: "home", Password: "wrong passphrase"})
	if fault.KindOf(err) != fault.Upstream || !strings.Contains(fault.Message(err), "wrong password") {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if _, ok := r.store.Lookup("home"); ok {
		t.Fatal("a network that failed was saved")
	}
	// The status follows the answer within a poll.
	r.wait(t, "the failure in the status", func(st netapi.Status) bool {
		return strings.Contains(st.LastError, "wrong password") && st.State == netapi.StateDisconnected
	})
	prio := 5
	if err := r.st.Connect(ctx, netapi.Connect{SSID: "home", Password: "right passphrase", Priority: &prio}); err != nil {
		t.Fatalf("right passphrase: %v", err)
	}
	if n, ok := r.store.Lookup("home"); !ok || n.PSK != "right passphrase" || n.Priority != 5 {
		t.Errorf("saved %+v %v", n, ok)
	}
	r.wait(t, "the address", connectedTo("home"))
	k := r.st.Known()
	if len(k.Networks) != 1 || k.Networks[0] != (netapi.KnownNetwork{SSID: "home", Priority: 5}) {
		t.Errorf("known %+v", k)
	}
}

// Bad input is refused before the radio is touched.
func TestConnectRefusals(t *testing.T) {
	r := start(t, true)
	r.radio.Put(radiotest.AP{SSID: "open", BSSID: bssid, SignalDBM: -50, Security: radio.Open})
	r.radio.Put(radiotest.AP{SSID: "new", BSSID: bssid, SignalDBM: -50, Security: radio.WPA3, PSK: "passphrase"})
	r.radio.Put(radiotest.AP{SSID: "wpa2", BSSID: bssid, SignalDBM: -50, Security: radio.WPA2, PSK: "passphrase"})
	r.wait(t, "the adapter", func(st netapi.Status) bool { return st.State == netapi.StateDisconnected })
	ctx := context.Background()
	for _, tc := range []struct {
		req  netapi.Connect
		kind fault.Kind
	}{
		{netapi.Connect{SSID: ""}, fault.Invalid},
		{netapi.Connect{SSID: strings.Repeat("x", 33)}, fault.Invalid},
		{netapi.Connect{SSID: "wpa2", Password: "short"}, fault.Invalid},
		{netapi.Connect{SSID: "wpa2"}, fault.Invalid},
		{netapi.Connect{SSID: "open", Password: "passphrase"}, fault.Invalid},
		{netapi.Connect{SSID: "new", Password: "passphrase"}, fault.Conflict},
		{netapi.Connect{SSID: "wpa2", Password: "passphrase", Interface: "eth0"}, fault.Conflict},
	} {
		if err := r.st.Connect(ctx, tc.req); fault.KindOf(err) != tc.kind {
			t.Errorf("%+v: %v, want %s", tc.req, err, tc.kind)
		}
	}
	if r.radio.Joins() != 0 {
		t.Errorf("%d joins for refused requests", r.radio.Joins())
	}
}

// An adapter without the handshake offload says so, still joins open
// networks, and refuses a protected one without leaving the open network
// it is on.
func TestNoOffload(t *testing.T) {
	r := start(t, false)
	r.radio.Put(radiotest.AP{SSID: "wpa2", BSSID: bssid, SignalDBM: -50, Security: radio.WPA2, PSK: "passphrase"})
	r.radio.Put(radiotest.AP{SSID: "cafe", BSSID: bssid, SignalDBM: -70, Security: radio.Open})
	r.wait(t, "the adapter", func(st netapi.Status) bool { return st.State == netapi.StateDisconnected })
	ctx := context.Background()
	ads, err := r.st.Adapters(ctx)
	if err != nil || len(ads.Adapters) != 1 || ads.Adapters[0].PSKOffload || !strings.Contains(ads.Adapters[0].Note, "open networks only") {
		t.Fatalf("adapters %+v %v", ads, err)
	}
	if err := r.st.Connect(ctx, netapi.Connect{SSID: "cafe"}); err != nil {
		t.Fatalf("open network: %v", err)
	}
	r.wait(t, "the open network", connectedTo("cafe"))
	joins, downs := r.radio.Joins(), r.addr.downCount()
	err = r.st.Connect(ctx, netapi.Connect{SSID: "wpa2", Password: "passphrase"})
	if !errors.Is(err, radio.ErrNoOffload) || !strings.Contains(fault.Message(err), "open networks only") {
		t.Fatalf("join through an adapter without offload: %v", err)
	}
	if st := r.st.Status(); !connectedTo("cafe")(st) || r.radio.Joins() != joins || r.addr.downCount() != downs {
		t.Fatalf("the refused join touched the connection: %+v, %d joins, %d downs", st, r.radio.Joins()-joins, r.addr.downCount()-downs)
	}
	if _, ok := r.store.Lookup("wpa2"); ok {
		t.Fatal("the refused network was saved")
	}
}

// The scan lists each name once at its strongest, strongest first, marks
// the joined and the known networks, and never shows a passphrase.
func TestScan(t *testing.T) {
	r := startWith(t, true, []radiotest.AP{
		{SSID: "home", BSSID: bssid, SignalDBM: -40, Security: radio.WPA2, PSK: "passphrase"},
		{SSID: "neighbour", BSSID: bssid, SignalDBM: -80, Security: radio.WPA2WPA3},
		{SSID: "cafe", BSSID: bssid, SignalDBM: -65, Security: radio.Open},
	}, store.Network{SSID: "home", PSK: "passphrase"})
	r.wait(t, "the join", connectedTo("home"))
	sc, err := r.st.Scan(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []netapi.Network{
		{SSID: "home", SignalDBM: -40, SignalPercent: 100, Security: "wpa2", Connected: true, Known: true, Interface: "wlan0"},
		{SSID: "cafe", SignalDBM: -65, SignalPercent: 64, Security: "open", Interface: "wlan0"},
		{SSID: "neighbour", SignalDBM: -80, SignalPercent: 42, Security: "wpa2/wpa3", Interface: "wlan0"},
	}
	if sc.Interface != "wlan0" || !slices.Equal(sc.Networks, want) {
		t.Errorf("scan %+v", sc)
	}
	if _, err := r.st.Scan(context.Background(), "wlan9"); fault.KindOf(err) != fault.Conflict {
		t.Errorf("scan on a missing adapter: %v", err)
	}
	r.radio.FailScans(errors.New("netlink: device busy"))
	if _, err := r.st.Scan(context.Background(), ""); fault.KindOf(err) != fault.Unavailable {
		t.Errorf("failed scan: %v", err)
	}
}

// The highest priority in reach wins over a stronger signal; forgetting
// the joined network moves on to the next.
func TestPriorityAndForget(t *testing.T) {
	r := startWith(t, true, []radiotest.AP{
		{SSID: "upstairs", BSSID: bssid, SignalDBM: -40, Security: radio.WPA2, PSK: "passphrase"},
		{SSID: "downstairs", BSSID: bssid, SignalDBM: -75, Security: radio.WPA2, PSK: "passphrase"},
	},
		store.Network{SSID: "upstairs", PSK: "passphrase", Priority: 1},
		store.Network{SSID: "downstairs", PSK: "passphrase", Priority: 9})
	r.wait(t, "the preferred network", connectedTo("downstairs"))
	if err := r.st.Forget(context.Background(), "downstairs"); err != nil {
		t.Fatal(err)
	}
	r.wait(t, "the other network", connectedTo("upstairs"))
	if err := r.st.Forget(context.Background(), "downstairs"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("forgetting twice: %v", err)
	}
}

// A known network whose passphrase has changed fails again and again, with
// a growing pause; another known network in reach is tried meanwhile.
func TestFailingNetworkDoesNotBlockOthers(t *testing.T) {
	r := startWith(t, true, []radiotest.AP{
		{SSID: "changed", BSSID: bssid, SignalDBM: -40, Security: radio.WPA2, PSK: "new passphrase"},
		{SSID: "spare", BSSID: bssid, SignalDBM: -80, Security: radio.Open},
	},
		store.Network{SSID: "changed", PSK: "old passphrase", Priority: 9},
		store.Network{SSID: "spare", Priority: 1})
	r.wait(t, "the spare network", connectedTo("spare"))
}

// The country is set at start and can be changed.
func TestCountry(t *testing.T) {
	r := start(t, true)
	r.wait(t, "the start country", func(st netapi.Status) bool { return st.Country == "DE" })
	if err := r.st.SetCountry(context.Background(), "GB"); err != nil {
		t.Fatal(err)
	}
	if r.store.Country() != "GB" {
		t.Errorf("saved country %q", r.store.Country())
	}
	for _, c := range []string{"", "de", "DEU"} {
		if err := r.st.SetCountry(context.Background(), c); fault.KindOf(err) != fault.Invalid {
			t.Errorf("country %q: %v", c, err)
		}
	}
}
