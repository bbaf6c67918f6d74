package main

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/hav1"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
	"github.com/storybox/storybox/services/playerd/internal/pki"
	"github.com/storybox/storybox/services/playerd/internal/power"
)

// haDir holds the home-automation secrets inside the data directory: the
// CA and server keys and the paired clients' token hashes (all 0600).
const haDir = "home-automation"

// haCheckEvery is how often the box looks at its addresses and the
// certificate's age; a new DHCP lease gets a certificate within this.
const haCheckEvery = 30 * time.Second

// homeAutomation is the v1 API on its TLS port.
type homeAutomation struct {
	id      *pki.Identity
	pairing *pairing.Manager
	srv     *http.Server
	ln      net.Listener
	hosts   []string // names for the certificate
}

// newHA opens the TLS identity and the paired clients. Without a usable
// data directory or box id the API stays off (logged): the box plays on.
func (a *app) newHA() {
	if a.cfg.HAListen == "" && a.cfg.HAListener == nil {
		return
	}
	if a.boxID == "" {
		a.log.Error("home-automation API off: the box has no saved id")
		return
	}
	dir := filepath.Join(a.cfg.Data, haDir)
	id, err := pki.Open(pki.Config{Dir: dir, Name: a.hostname, Now: a.cfg.HAClock})
	if id == nil {
		a.log.Error("home-automation API off: no TLS identity", "error", err)
		return
	}
	if err != nil {
		a.log.Warn("home-automation TLS identity replaced; paired clients must pair again", "error", err)
	}
	m, err := pairing.New(pairing.Config{File: filepath.Join(dir, "clients.json"), DeviceID: a.boxID, Now: a.cfg.HAClock,
		OnChange: func() {
			if d := a.display; d != nil {
				d.Wake()
			}
		}})
	if err != nil {
		a.log.Error("paired home-automation clients unreadable; they must pair again", "error", err)
	}
	ha := &homeAutomation{id: id, pairing: m, hosts: certNames(a.hostname, a.cfg.AllowHosts)}
	if _, err := ha.ensure(); err != nil {
		a.log.Error("home-automation certificate", "error", err)
	}
	a.ha = ha
}

// certNames are the names the server certificate carries: those the API
// answers to (auth.Hosts), localhost included.
func certNames(host string, extra []string) []string {
	names := []string{"localhost"}
	if host = strings.TrimSuffix(strings.ToLower(host), "."); host != "" {
		names = append(names, host, host+".local")
		if first, _, ok := strings.Cut(host, "."); ok && first != "" {
			names = append(names, first, first+".local")
		}
	}
	return append(names, extra...)
}

func (ha *homeAutomation) ensure() (bool, error) {
	addrs, err := pki.Addresses()
	if err != nil {
		return false, err
	}
	return ha.id.Ensure(pki.Hosts{Names: ha.hosts, Addrs: addrs})
}

// startHA serves the v1 API and keeps its certificate current until ctx
// ends.
func (a *app) startHA(ctx context.Context, wg *sync.WaitGroup) {
	ha := a.ha
	if ha == nil {
		return
	}
	ln := a.cfg.HAListener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", a.cfg.HAListen); err != nil {
			a.log.Error("home-automation API off: listen", "error", err)
			return
		}
	}
	// The same connection limits as :8090 (serve.go), below TLS so a
	// flood of handshakes is bounded too.
	ha.ln = hav1.Listener(limit(ln), ha.id.TLSConfig())
	ha.srv = newServer(a.haHandler())
	// Handshake failures (a client's first probe, plain HTTP, a scan) are
	// the client's business and would flood gokrazy's log.
	ha.srv.ErrorLog = log.New(io.Discard, "", 0)
	a.log.Info("home-automation API ready", "listen", ln.Addr().String(), "fingerprint", ha.id.Fingerprint())
	wg.Go(func() {
		if err := ha.srv.Serve(ha.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("home-automation API stopped", "error", err)
		}
	})
	wg.Go(func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = ha.srv.Shutdown(sctx)
	})
	wg.Go(func() {
		t := time.NewTicker(haCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if renewed, err := ha.ensure(); err != nil {
				a.log.Error("home-automation certificate", "error", err)
			} else if renewed {
				a.log.Info("home-automation certificate renewed", "valid_until", ha.id.Leaf().NotAfter)
			}
		}
	})
	if a.cfg.HAAdvertise {
		port := ln.Addr().(*net.TCPAddr).Port
		wg.Go(func() {
			svc := hav1.Service(a.hostname, a.hostname, a.boxID, port)
			if err := hav1.Advertise(ctx, svc); err != nil {
				a.log.Warn("mDNS advertisement", "error", err)
			}
		})
	}
}

func (a *app) haHandler() http.Handler {
	return hav1.NewHandler(hav1.Deps{
		Log:     a.log,
		Version: a.cfg.Version,
		Name:    a.hostname,
		Pairing: a.ha.pairing,
		CA:      a.ha.id,
		// The same command path as the local API's POST /api/command.
		Player:  a.commands(),
		Covers:  a.lib,
		Device:  a.haDevice,
		Metrics: func() any { return a.metrics.Read() },
		Output:  outputOf(a.cfg.Output),
		Speaker: a.speech,
		Display: a.display,
		Power:   a.powerRequest(),
		Events:  haFeed{a},
		Auth:    a.auth,
		Hosts:   a.hosts,
	})
}

// haDevice is the device part of GET /api/ha/v1/state.
func (a *app) haDevice() hav1.Device {
	s := a.system.Read()
	var d hav1.Device
	if s.Battery.Available {
		d.BatteryPercent = s.Battery.Percent
		charging := s.Battery.Charging
		d.Charging = &charging
	}
	d.WifiSignalDBM, d.IPAddress = s.Wifi.SignalDBM, s.Wifi.IPv4
	d.UptimeSeconds = a.metrics.Read().UptimeSeconds
	return d
}

// outputOf describes the configured output without a file path.
func outputOf(spec string) hav1.Output {
	kind, dev, _ := strings.Cut(spec, ":")
	o := hav1.Output{ID: "box", Name: "storybox", Subtitle: kind}
	if kind == "alsa" && dev != "" {
		o.Subtitle += " " + dev
	}
	return o
}

// powerRequest is how a paired client with the power scope reboots or
// powers off the box: the same request as the admin API's, so run stops
// every part, saves, then acts. Nil where this machine cannot (not gokrazy,
// no test hook).
func (a *app) powerRequest() func(string) error {
	if a.powerFunc(power.PowerOff) == nil && a.powerFunc(power.Reboot) == nil {
		return nil
	}
	return func(action string) error {
		act, err := power.ParseAction(action)
		if err != nil {
			return err
		}
		select {
		case a.adm.powerReq <- act:
			a.log.Warn("home automation asked to " + action)
			return nil
		default:
			return fault.New(fault.Conflict, "the box is already going down")
		}
	}
}

// haStatus is GET /api/admin/ha: what a parent needs to pair and to see
// who is paired. Never a code or a token.
func (a *app) haStatus() (any, error) {
	ha := a.ha
	if ha == nil {
		return nil, fault.New(fault.Unavailable, "the home-automation API is off (see the log)")
	}
	leaf := ha.id.Leaf()
	st := ha.pairing.Status()
	out := map[string]any{
		"fingerprint": ha.id.Fingerprint(),
		"device_id":   a.boxID,
		"port":        haPort(a.cfg),
		"pairing":     map[string]any{"window_open": st.WindowOpen, "window_expires_in": st.WindowLeft, "allowed_scopes": st.Allowed, "pending": st.Pending},
		"clients":     st.Clients,
	}
	if leaf != nil {
		var addrs []string
		for _, ip := range leaf.IPAddresses {
			if ad, ok := netip.AddrFromSlice(ip); ok {
				addrs = append(addrs, ad.Unmap().String())
			}
		}
		out["certificate"] = map[string]any{"names": leaf.DNSNames, "addresses": addrs, "not_after": leaf.NotAfter}
	}
	return out, nil
}

func haPort(c Config) int {
	if c.HAListener != nil {
		return c.HAListener.Addr().(*net.TCPAddr).Port
	}
	_, p, _ := net.SplitHostPort(c.HAListen)
	n, _ := strconv.Atoi(p)
	return n
}

// haAdmin is the local admin API's view of the home-automation API.
type haAdmin struct{ a *app }

func (h haAdmin) Status() (any, error) { return h.a.haStatus() }

func (h haAdmin) Enable(scopes []string) (any, error) {
	if h.a.ha == nil {
		return nil, fault.New(fault.Unavailable, "the home-automation API is off (see the log)")
	}
	res, err := hav1.Enable(h.a.ha.pairing, scopes)
	if err == nil {
		h.a.log.Info("home-automation pairing window opened", "scopes", res.Scopes)
	}
	return res, err
}

func (h haAdmin) Cancel() error {
	if h.a.ha == nil {
		return fault.New(fault.Unavailable, "the home-automation API is off (see the log)")
	}
	h.a.ha.pairing.Cancel()
	return nil
}

func (h haAdmin) Revoke(clientID string) error {
	if h.a.ha == nil {
		return fault.New(fault.Unavailable, "the home-automation API is off (see the log)")
	}
	if err := h.a.ha.pairing.Revoke(clientID); err != nil {
		return err
	}
	h.a.log.Info("home-automation client revoked", "client_id", clientID)
	return nil
}
