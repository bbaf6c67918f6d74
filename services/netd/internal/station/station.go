// Package station keeps the box on a known Wi-Fi network. One goroutine
// (Run) owns the adapter: it joins the best known network in reach, notices
// a drop and joins again with a growing pause (1 s doubling to RetryMax),
// and runs what the API asks (scan, join a new network, forget one) in
// between, so two requests never fight over the radio.
package station

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/netd/internal/ipconf"
	"github.com/storybox/storybox/services/netd/internal/radio"
	"github.com/storybox/storybox/services/netd/internal/store"
)

// Addressing gives an associated interface its IP configuration.
type Addressing interface {
	Up(iface string)
	Down(iface string) error
	Addrs(iface string) ipconf.Addr
}

// Config is what a Station works with.
type Config struct {
	Radio radio.Radio
	Store *store.Store
	Addr  Addressing
	Log   *slog.Logger
	// Interface to use; empty: the first station adapter.
	Interface string
	// Country is the regulatory country when the store has none.
	Country string
	// Poll is how often the link is read; JoinTimeout how long a join
	// may take; RetryMin and RetryMax the shortest and longest pause
	// between attempts.
	Poll, JoinTimeout, RetryMin, RetryMax time.Duration
	// ScanTimeout bounds one scan.
	ScanTimeout time.Duration
}

// Defaults for the durations.
const (
	DefaultPoll        = time.Second
	DefaultJoinTimeout = 20 * time.Second
	DefaultRetryMax    = time.Minute
	DefaultScanTimeout = 15 * time.Second
	DefaultRetryMin    = time.Second
)

// Station is the Wi-Fi client. Use New, then Run.
type Station struct {
	cfg  Config
	reqs chan func()

	// Owned by Run's goroutine.
	iface    string
	state    string
	target   store.Network // the network joining or joined
	deadline time.Time     // of the join in progress
	pending  chan<- error  // the API request waiting for this join
	retryAt  time.Time
	backoff  time.Duration
	failed   map[string]bool // networks that failed this round
	lastErr  string
	link     radio.Link

	mu     sync.Mutex
	status netapi.Status
}

// New returns a station; nothing runs until Run.
func New(cfg Config) *Station {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Poll = cmp.Or(cfg.Poll, DefaultPoll)
	cfg.JoinTimeout = cmp.Or(cfg.JoinTimeout, DefaultJoinTimeout)
	cfg.RetryMin = cmp.Or(cfg.RetryMin, DefaultRetryMin)
	cfg.RetryMax = max(cmp.Or(cfg.RetryMax, DefaultRetryMax), cfg.RetryMin)
	cfg.ScanTimeout = cmp.Or(cfg.ScanTimeout, DefaultScanTimeout)
	return &Station{cfg: cfg, reqs: make(chan func()), state: netapi.StateNoAdapter, failed: map[string]bool{},
		status: netapi.Status{State: netapi.StateNoAdapter, Addresses: []string{}}}
}

// Run owns the adapter until ctx ends; it leaves the network then, so the
// next start (an update) begins clean.
func (s *Station) Run(ctx context.Context) {
	s.applyCountry()
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	s.step(ctx)
	for {
		select {
		case <-ctx.Done():
			if s.pending != nil {
				s.pending <- fault.New(fault.Unavailable, "network service stopping")
			}
			return
		case f := <-s.reqs:
			f()
		case <-t.C:
		}
		s.step(ctx)
	}
}

// do runs f on Run's goroutine and waits for it.
func (s *Station) do(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case s.reqs <- func() { defer close(done); f() }:
	case <-ctx.Done():
		return fault.New(fault.Unavailable, "network service busy")
	}
	<-done
	return nil
}

// Status is the state now; it never waits for the radio.
func (s *Station) Status() netapi.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.Addresses = slices.Clone(st.Addresses)
	return st
}

func (s *Station) applyCountry() {
	c := cmp.Or(s.cfg.Store.Country(), s.cfg.Country)
	if c == "" {
		return
	}
	if err := s.cfg.Radio.SetCountry(c); err != nil {
		s.cfg.Log.Warn("regulatory country", "country", c, "err", err)
	}
}

// step reads the link and moves the state on.
func (s *Station) step(ctx context.Context) {
	defer s.publish()
	if !s.ensureAdapter() {
		return
	}
	link, err := s.cfg.Radio.Link(s.iface)
	if err != nil {
		s.cfg.Log.Warn("reading the link", "interface", s.iface, "err", err)
		s.iface = "" // the adapter may have gone (USB); look again next time
		return
	}
	s.link = link
	now := time.Now()
	switch s.state {
	case netapi.StateConnected:
		if !link.Associated {
			s.cfg.Log.Warn("Wi-Fi connection lost", "ssid", s.target.SSID)
			s.lastErr = fmt.Sprintf("connection to %q lost", s.target.SSID)
			s.down()
			s.state = netapi.StateDisconnected
			s.backoff = 0
			s.scheduleRetry(now)
		}
	case netapi.StateConnecting:
		switch {
		case link.Associated && link.SSID == s.target.SSID:
			s.joined()
		case now.After(s.deadline):
			s.joinFailed(now, fault.New(fault.Upstream,
				"could not join %q: wrong password, or the network is out of reach", s.target.SSID))
		}
	case netapi.StateDisconnected:
		if link.Associated { // joined by someone else, or still from before netd started
			if n, ok := s.cfg.Store.Lookup(link.SSID); ok {
				s.target = n
				s.joined()
				return
			}
		}
		if !now.Before(s.retryAt) {
			s.autoJoin(ctx, now)
		}
	}
}

func (s *Station) ensureAdapter() bool {
	if s.iface != "" {
		return true
	}
	ads, err := s.cfg.Radio.Adapters()
	if err == nil {
		for _, a := range ads {
			if a.Station && (s.cfg.Interface == "" || a.Name == s.cfg.Interface) {
				s.iface = a.Name
				break
			}
		}
	}
	if s.iface == "" {
		s.state = netapi.StateNoAdapter
		return false
	}
	if err := s.cfg.Radio.Up(s.iface); err != nil {
		s.cfg.Log.Warn("setting the Wi-Fi interface up", "interface", s.iface, "err", err)
	}
	if s.state == netapi.StateNoAdapter {
		s.state = netapi.StateDisconnected
		s.cfg.Log.Info("Wi-Fi adapter", "interface", s.iface)
	}
	return true
}

func (s *Station) joined() {
	s.state = netapi.StateConnected
	s.lastErr, s.backoff, s.retryAt = "", 0, time.Time{}
	clear(s.failed)
	s.cfg.Log.Info("Wi-Fi connected", "ssid", s.target.SSID, "interface", s.iface)
	s.cfg.Addr.Up(s.iface)
	if s.pending != nil {
		// A network joined at the API's request is kept, and keeps any
		// passphrase only now that it has been proven right.
		err := s.cfg.Store.Put(s.target)
		s.pending <- err
		s.pending = nil
	}
}

func (s *Station) joinFailed(now time.Time, err error) {
	s.cfg.Log.Warn("Wi-Fi join failed", "ssid", s.target.SSID, "err", err)
	_ = s.cfg.Radio.Leave(s.iface)
	s.lastErr = fault.Message(err)
	s.failed[s.target.SSID] = true
	s.state = netapi.StateDisconnected
	if s.pending != nil {
		s.pending <- err
		s.pending = nil
		s.retryAt = now // back to the known networks at once
		return
	}
	s.scheduleRetry(now)
}

func (s *Station) scheduleRetry(now time.Time) {
	s.backoff = min(max(2*s.backoff, s.cfg.RetryMin), s.cfg.RetryMax)
	s.retryAt = now.Add(s.backoff)
}

func (s *Station) down() {
	if err := s.cfg.Addr.Down(s.iface); err != nil {
		s.cfg.Log.Warn("removing addresses", "interface", s.iface, "err", err)
	}
}

// autoJoin joins the best known network in reach: highest priority, then
// strongest signal, skipping those that failed since the last success.
func (s *Station) autoJoin(ctx context.Context, now time.Time) {
	known := s.cfg.Store.Networks()
	if len(known) == 0 {
		return
	}
	bss, err := s.scan(ctx, s.iface)
	if err != nil {
		s.lastErr = "scan failed"
		s.cfg.Log.Warn("scan", "err", err)
		s.scheduleRetry(now)
		return
	}
	best := map[string]radio.BSS{}
	for _, b := range bss {
		if o, ok := best[b.SSID]; !ok || b.SignalDBM > o.SignalDBM {
			best[b.SSID] = b
		}
	}
	var cands []store.Network
	for _, n := range known {
		if b, ok := best[n.SSID]; ok && b.Security.Joinable() && !s.failed[n.SSID] {
			cands = append(cands, n)
		}
	}
	if len(cands) == 0 {
		if len(s.failed) == 0 {
			s.lastErr = fmt.Sprintf("none of the %d known networks is in reach", len(known))
		}
		clear(s.failed) // next round: everyone gets another try
		s.scheduleRetry(time.Now())
		return
	}
	slices.SortStableFunc(cands, func(a, b store.Network) int {
		return cmp.Or(b.Priority-a.Priority, best[b.SSID].SignalDBM-best[a.SSID].SignalDBM)
	})
	if err := s.join(cands[0]); err != nil {
		s.joinFailed(time.Now(), err)
	}
}

func (s *Station) scan(ctx context.Context, iface string) ([]radio.BSS, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ScanTimeout)
	defer cancel()
	var err error
	for range 3 { // the chip may be busy with its own background scan
		var bss []radio.BSS
		if bss, err = s.cfg.Radio.Scan(ctx, iface); err == nil {
			return bss, nil
		}
		if !radio.IsBusy(err) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(500 * time.Millisecond):
		}
	}
	return nil, err
}

// join starts joining n.
func (s *Station) join(n store.Network) error {
	if err := s.cfg.Radio.Join(s.iface, n.SSID, n.PSK); err != nil {
		return err
	}
	s.cfg.Log.Info("joining Wi-Fi", "ssid", n.SSID, "interface", s.iface)
	s.target, s.state, s.deadline = n, netapi.StateConnecting, time.Now().Add(s.cfg.JoinTimeout)
	return nil
}

// leave ends the current connection or join.
func (s *Station) leave() {
	if s.state == netapi.StateConnected {
		s.down()
	}
	if s.state == netapi.StateConnected || s.state == netapi.StateConnecting {
		_ = s.cfg.Radio.Leave(s.iface)
	}
	if s.pending != nil {
		s.pending <- fault.New(fault.Conflict, "another join was requested")
		s.pending = nil
	}
	s.state = netapi.StateDisconnected
}

// publish updates the status snapshot.
func (s *Station) publish() {
	st := netapi.Status{State: s.state, Interface: s.iface, LastError: s.lastErr, KnownNetworks: len(s.cfg.Store.Networks()), Addresses: []string{}}
	if c, err := s.cfg.Radio.Country(); err == nil {
		st.Country = c
	}
	if s.state == netapi.StateConnected || s.state == netapi.StateConnecting {
		st.SSID = s.target.SSID
	}
	if s.state == netapi.StateConnected && s.link.Associated {
		st.BSSID = s.link.BSSID.String()
		if s.link.SignalDBM != 0 {
			dbm, pct := s.link.SignalDBM, radio.Percent(s.link.SignalDBM)
			st.SignalDBM, st.SignalPercent = &dbm, &pct
		}
		if s.link.FrequencyMHz != 0 {
			f := s.link.FrequencyMHz
			st.FrequencyMHz = &f
		}
	}
	if s.iface != "" {
		a := s.cfg.Addr.Addrs(s.iface)
		if a.CIDRs != nil {
			st.Addresses = a.CIDRs
		}
		if a.IPv4 != "" {
			st.IPv4 = &a.IPv4
		}
		if a.Gateway != "" {
			st.Gateway = &a.Gateway
		}
	}
	if s.state == netapi.StateDisconnected && !s.retryAt.IsZero() && len(s.cfg.Store.Networks()) > 0 {
		t := s.retryAt.UTC().Format(time.RFC3339)
		st.NextAttempt = &t
	}
	s.mu.Lock()
	s.status = st
	s.mu.Unlock()
}

// Adapters lists the Wi-Fi adapters as the API shows them.
func (s *Station) Adapters(ctx context.Context) (netapi.Adapters, error) {
	var out netapi.Adapters
	var err error
	derr := s.do(ctx, func() {
		var ads []radio.Adapter
		if ads, err = s.cfg.Radio.Adapters(); err != nil {
			err = fault.Wrap(fault.Unavailable, err, "Wi-Fi adapters could not be read")
			return
		}
		out.Adapters = []netapi.Adapter{}
		out.PrimaryInterface = cmp.Or(s.cfg.Interface, s.iface)
		out.SelectedInterface = s.iface
		for _, a := range ads {
			sel := a.Name == s.iface
			na := netapi.Adapter{
				Interface: a.Name, MAC: a.MAC.String(), Driver: a.Driver, State: "down",
				Managed: a.Station, Usable: a.Station, Enabled: a.Up, Preferred: a.Name == out.PrimaryInterface,
				Selected: sel, Active: sel && s.state == netapi.StateConnected, PSKOffload: a.PSKOffload,
			}
			if a.Up {
				na.State = "up"
			}
			if na.Active {
				na.State = "connected"
			}
			switch {
			case !a.Station:
				na.Note = "not a client interface"
			case !a.PSKOffload:
				na.Note = radio.ErrNoOffload.Msg
			}
			out.Adapters = append(out.Adapters, na)
		}
	})
	return out, cmp.Or(derr, err)
}

// Scan scans on iface (empty: the selected adapter) and lists each network
// name once, with its strongest access point.
func (s *Station) Scan(ctx context.Context, iface string) (netapi.Scan, error) {
	var out netapi.Scan
	var err error
	derr := s.do(ctx, func() {
		if iface == "" {
			s.ensureAdapter()
			iface = s.iface
		}
		if iface == "" || !s.isStation(iface) {
			err = radio.ErrNoAdapter
			return
		}
		if uerr := s.cfg.Radio.Up(iface); uerr != nil {
			err = fault.Wrap(fault.Conflict, uerr, radio.ErrNoAdapter.Msg)
			return
		}
		var bss []radio.BSS
		if bss, err = s.scan(ctx, iface); err != nil {
			err = fault.Wrap(fault.Unavailable, err, "Wi-Fi scan failed")
			return
		}
		out = netapi.Scan{Interface: iface, Networks: networks(bss, iface, s.connectedSSID(iface), s.cfg.Store)}
	})
	return out, cmp.Or(derr, err)
}

func (s *Station) connectedSSID(iface string) string {
	if iface == s.iface && s.state == netapi.StateConnected {
		return s.target.SSID
	}
	return ""
}

// offloads tells whether iface can do the WPA2 handshake itself. An
// unreadable adapter list says yes: the join itself will tell.
func (s *Station) offloads(iface string) bool {
	ads, err := s.cfg.Radio.Adapters()
	if err != nil {
		return true
	}
	i := slices.IndexFunc(ads, func(a radio.Adapter) bool { return a.Name == iface })
	return i < 0 || ads[i].PSKOffload
}

func (s *Station) isStation(iface string) bool {
	ads, err := s.cfg.Radio.Adapters()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ads, func(a radio.Adapter) bool { return a.Name == iface && a.Station })
}

func networks(bss []radio.BSS, iface, connected string, st *store.Store) []netapi.Network {
	best := map[string]radio.BSS{}
	for _, b := range bss {
		if o, ok := best[b.SSID]; !ok || b.SignalDBM > o.SignalDBM {
			best[b.SSID] = b
		}
	}
	out := make([]netapi.Network, 0, len(best))
	for _, b := range best {
		_, known := st.Lookup(b.SSID)
		out = append(out, netapi.Network{
			SSID: b.SSID, SignalDBM: b.SignalDBM, SignalPercent: radio.Percent(b.SignalDBM), Security: string(b.Security),
			Connected: b.SSID == connected, Known: known, Interface: iface,
		})
	}
	slices.SortFunc(out, func(a, b netapi.Network) int { return cmp.Or(b.SignalDBM-a.SignalDBM, cmp.Compare(a.SSID, b.SSID)) })
	return out
}

// Connect joins a network now and, once joined, saves it as known. It
// returns when the join succeeded or failed: fault.Upstream when the
// network did not take the passphrase or is out of reach.
func (s *Station) Connect(ctx context.Context, req netapi.Connect) error {
	if err := store.Validate(req.SSID, req.Password); err != nil {
		return err
	}
	result := make(chan error, 1)
	var err error
	derr := s.do(ctx, func() {
		if req.Interface != "" && req.Interface != s.iface {
			if !s.isStation(req.Interface) {
				err = radio.ErrNoAdapter
				return
			}
			s.leave()
			s.iface = req.Interface
		}
		if !s.ensureAdapter() {
			err = radio.ErrNoAdapter
			return
		}
		if err = s.checkSecurity(ctx, req); err != nil {
			return
		}
		// Refused before leaving the network joined now: a join that
		// cannot work must not cost the box its connection.
		if req.Password != "" && !s.offloads(s.iface) {
			err = radio.ErrNoOffload
			return
		}
		n := store.Network{SSID: req.SSID, PSK: req.Password}
		if old, ok := s.cfg.Store.Lookup(req.SSID); ok {
			n.Priority = old.Priority
		}
		if req.Priority != nil {
			n.Priority = *req.Priority
		}
		s.leave()
		if err = s.join(n); err != nil {
			s.retryAt = time.Now()
			return
		}
		s.pending = result
	})
	if err = cmp.Or(derr, err); err != nil {
		return err
	}
	select {
	case err := <-result:
		return err
	case <-ctx.Done():
		return fault.New(fault.Unavailable, "gave up waiting for the join; it goes on, see the status")
	}
}

// checkSecurity refuses what cannot work before leaving the current
// network for it. A network not seen in the scan may be hidden: that join
// is tried.
func (s *Station) checkSecurity(ctx context.Context, req netapi.Connect) error {
	bss, err := s.scan(ctx, s.iface)
	if err != nil {
		return nil // the join itself will tell
	}
	for _, b := range bss {
		if b.SSID != req.SSID {
			continue
		}
		switch {
		case !b.Security.Joinable():
			return radio.ErrUnsupportedSecurity
		case b.Security == radio.Open && req.Password != "":
			return fault.New(fault.Invalid, "%q is an open network; leave the password empty", req.SSID)
		case b.Security != radio.Open && req.Password == "":
			return fault.New(fault.Invalid, "%q needs a password", req.SSID)
		}
		return nil
	}
	return nil
}

// Known lists the saved networks without their passphrases.
func (s *Station) Known() netapi.Known {
	out := netapi.Known{Networks: []netapi.KnownNetwork{}}
	for _, n := range s.cfg.Store.Networks() {
		out.Networks = append(out.Networks, netapi.KnownNetwork{SSID: n.SSID, Priority: n.Priority, Open: n.PSK == ""})
	}
	return out
}

// Forget removes a known network and leaves it if it is the one joined.
func (s *Station) Forget(ctx context.Context, ssid string) error {
	var err error
	derr := s.do(ctx, func() {
		if err = s.cfg.Store.Forget(ssid); err != nil {
			return
		}
		if (s.state == netapi.StateConnected || s.state == netapi.StateConnecting) && s.target.SSID == ssid {
			s.leave()
			s.retryAt = time.Time{} // on to another known network
		}
		delete(s.failed, ssid)
	})
	return cmp.Or(derr, err)
}

// SetCountry saves and applies the regulatory country.
func (s *Station) SetCountry(ctx context.Context, c string) error {
	if c == "" {
		return fault.New(fault.Invalid, "country is required")
	}
	if err := store.CheckCountry(c); err != nil {
		return err
	}
	var err error
	derr := s.do(ctx, func() {
		if err = s.cfg.Store.SetCountry(c); err != nil {
			return
		}
		if rerr := s.cfg.Radio.SetCountry(c); rerr != nil {
			err = fault.Wrap(fault.Internal, rerr, "the country could not be set")
		}
	})
	return cmp.Or(derr, err)
}
