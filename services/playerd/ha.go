package main

import (
	"context"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/hav1"
	"github.com/storybox/storybox/services/playerd/internal/httpserve"
	"github.com/storybox/storybox/services/playerd/internal/netclient"
)

// homeAutomation is the v1 API on its TLS port: its identity and paired
// clients (hav1.Server), its HTTP server and listener.
type homeAutomation struct {
	srv    *hav1.Server
	http   *http.Server
	ln     net.Listener // nil until it listens
	listen string       // -ha-listen
	host   string
	id     string // the box id
	// certCheck paces the certificate's checks; nil: every haCheckEvery.
	certCheck <-chan time.Time
}

// haDir holds the home-automation secrets inside the data directory.
const haDir = "home-automation"

// haCheckEvery is how often the box looks at its addresses and the
// certificate's dates; a new DHCP lease gets a certificate within this, and
// so does a step of the wall clock that makes the certificate due.
const haCheckEvery = 30 * time.Second

// openHA opens the API's identity and paired clients. Without a usable data
// directory or box id it stays off (logged, nil): the box plays on.
func openHA(cfg Config, h hooks, host, id string, clk clock.Clock, log *slog.Logger) *homeAutomation {
	if cfg.HAListen == "" && h.haListener == nil {
		return nil
	}
	ha := &homeAutomation{ln: listen(h.haListener, cfg.HAListen, log), listen: cfg.HAListen, host: host, id: id, certCheck: h.certCheck}
	srv, err := hav1.Open(hav1.ServerConfig{Dir: filepath.Join(cfg.Data, haDir), DeviceID: id,
		Host: host, Names: cfg.AllowHosts, Port: ha.port(), Clock: clk, Addresses: h.certAddrs})
	if srv == nil {
		log.Error("home-automation API off", "error", err)
		if ha.ln != nil {
			ha.ln.Close()
		}
		return nil
	}
	if err != nil {
		log.Warn("home-automation API", "error", err)
	}
	ha.srv = srv
	return ha
}

// admin is the local admin API's side of the API: pairing and revoking; a
// nil one answers that the API is off.
func (ha *homeAutomation) admin() *hav1.Server {
	if ha == nil {
		return nil
	}
	return ha.srv
}

// port is where the API listens, or would.
func (ha *homeAutomation) port() int {
	if ha.ln != nil {
		return ha.ln.Addr().(*net.TCPAddr).Port
	}
	_, p, _ := net.SplitHostPort(ha.listen)
	n, _ := strconv.Atoi(p)
	return n
}

// serve makes the API's server from the surfaces' parts.
func (ha *homeAutomation) serve(d hav1.Deps) {
	d.Pairing, d.CA = ha.srv.Pairing(), ha.srv.Identity()
	ha.http = httpserve.New(hav1.NewHandler(d))
	// Handshake failures (a client's first probe, plain HTTP, a scan) are
	// the client's business and would flood gokrazy's log.
	ha.http.ErrorLog = stdlog.New(io.Discard, "", 0)
}

// start serves the API and keeps its certificate current until ctx ends.
func (ha *homeAutomation) start(ctx context.Context, sup *daemon.Group, log *slog.Logger) {
	id := ha.srv.Identity()
	if ha.ln != nil {
		log.Info("home-automation API ready", "listen", ha.ln.Addr().String(), "fingerprint", id.Fingerprint())
	}
	// The same connection limits as :8090, below TLS so a flood of
	// handshakes is bounded too.
	tlsConf := id.TLSConfig()
	wrap := func(ln net.Listener) net.Listener { return hav1.Listener(httpserve.Limit(ln), tlsConf) }
	sup.Restarting(ctx, "home-automation API", func(ctx context.Context) error {
		httpserve.Serve(ctx, ha.http, ha.ln, ha.listen, wrap, log)
		return nil
	})
	sup.Restarting(ctx, "home-automation certificate", func(ctx context.Context) error {
		tick := ha.certCheck
		if tick == nil {
			t := time.NewTicker(haCheckEvery)
			defer t.Stop()
			tick = t.C
		}
		ha.srv.KeepCertificate(ctx, tick, func(renewed bool, err error) {
			if err != nil {
				log.Error("home-automation certificate", "error", err)
			} else {
				log.Info("home-automation certificate renewed", "valid_until", id.Leaf().NotAfter)
			}
		})
		return nil
	})
}

// announce has netd, the box's one mDNS responder, announce the API as
// _mupibox._tcp (Home Assistant's discovery) for as long as ctx lasts.
func (ha *homeAutomation) announce(ctx context.Context, sup *daemon.Group, on bool, netd *netclient.Client, log *slog.Logger) {
	switch {
	case !on:
		return
	case netd == nil:
		log.Info("home-automation API not announced by mDNS: no network service (-net)")
		return
	}
	svc := hav1.MDNSService(ha.host, ha.id, ha.port())
	sup.Once(ctx, "mDNS announcement", func(ctx context.Context) error {
		netd.KeepAnnounced(ctx, svc, 0, func(err error) {
			if err != nil {
				log.Warn("home-automation API not announced by netd", "error", err)
			} else {
				log.Info("home-automation API announced by netd", "service", svc.Type, "port", svc.Port)
			}
		})
		return nil
	})
}
