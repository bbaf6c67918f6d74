// Package haserve runs the home-automation API (hav1) on its own TLS port:
// it opens the API's identity over the core's pairing, listens, serves within
// the same limits as the local API, keeps the certificate current and has
// netd announce the API over mDNS. playerd's main decides whether it runs
// and supervises what it starts.
package haserve

import (
	"context"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/hav1"
	"github.com/storybox/storybox/services/playerd/internal/httpserve"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
)

// Config says where the API listens, where its secrets are and what the
// box is called.
type Config struct {
	// Listen is the address (-ha-listen); Listener, a test's, is served
	// instead when set.
	Listen   string
	Listener net.Listener
	// Data is playerd's data directory; the secrets are in Dir below it.
	Data string
	// Host is the box's host name, Names the further names it answers to,
	// ID the box id.
	Host, ID string
	Names    []string
	Clock    clock.Clock
	// Addresses are the addresses the certificate is for (nil: the
	// machine's); CertCheck paces the certificate's checks (nil: every
	// CheckEvery).
	Addresses func() ([]netip.Addr, error)
	CertCheck <-chan time.Time
	// Core is the core's side of the API (box.HomeAutomation): the
	// pairing the API serves, and where it tells that it serves.
	Core Core
	// TXT, when set, gives the record's TXT keys with further keys of the
	// box's (the household's, which let other boxes add this one), or
	// nil while they are not known yet.
	TXT func(ctx context.Context, base map[string]string) map[string]string
}

// txtRetry is how often the further TXT keys are asked for while they are
// not known (syncd starts beside playerd and may answer later).
const txtRetry = 30 * time.Second

// Core is what the API needs of the core's home-automation facet.
type Core interface {
	Pairing() *pairing.Manager
	Serving(id box.Identity, port int)
}

// Dir holds the home-automation secrets inside the data directory.
const Dir = pairing.Dir

// CheckEvery is how often the box looks at its addresses and the
// certificate's dates; a new DHCP lease gets a certificate within this, and
// so does a step of the wall clock that makes the certificate due.
const CheckEvery = 30 * time.Second

// Service is the API on its port: its identity and paired clients
// (hav1.Server), its HTTP server and listener.
type Service struct {
	cfg  Config
	srv  *hav1.Server
	http *http.Server
	ln   net.Listener // nil until it listens
}

// Open opens the API's identity and paired clients. Without a usable data
// directory or box id it stays off (logged, nil): the box plays on.
func Open(cfg Config, log *slog.Logger) *Service {
	s := &Service{cfg: cfg, ln: httpserve.Listen(cfg.Listener, cfg.Listen, log)}
	srv, err := hav1.Open(hav1.ServerConfig{Dir: filepath.Join(cfg.Data, Dir), DeviceID: cfg.ID, Pairing: cfg.Core.Pairing(),
		Host: cfg.Host, Names: cfg.Names, Clock: cfg.Clock, Addresses: cfg.Addresses})
	if srv == nil {
		log.Error("home-automation API off", "error", err)
		if s.ln != nil {
			s.ln.Close()
		}
		return nil
	}
	if err != nil {
		log.Warn("home-automation API", "error", err)
	}
	s.srv = srv
	cfg.Core.Serving(srv.Identity(), s.port())
	return s
}

// port is where the API listens, or would.
func (s *Service) port() int {
	if s.ln != nil {
		return s.ln.Addr().(*net.TCPAddr).Port
	}
	_, p, _ := net.SplitHostPort(s.cfg.Listen)
	n, _ := strconv.Atoi(p)
	return n
}

// Handle makes the API's HTTP server from the surfaces' parts; the
// service's own pairing and identity complete them.
func (s *Service) Handle(d hav1.Deps) {
	d.Pairing, d.CA = s.srv.Pairing(), s.srv.Identity()
	s.http = httpserve.New(hav1.NewHandler(d))
	// Handshake failures (a client's first probe, plain HTTP, a scan) are
	// the client's business and would flood gokrazy's log.
	s.http.ErrorLog = stdlog.New(io.Discard, "", 0)
}

// Start serves the API and keeps its certificate current under sup until
// ctx ends.
func (s *Service) Start(ctx context.Context, sup *daemon.Group, log *slog.Logger) {
	id := s.srv.Identity()
	if s.ln != nil {
		log.Info("home-automation API ready", "listen", s.ln.Addr().String(), "fingerprint", id.Fingerprint())
	}
	// The same connection limits as :8090, below TLS so a flood of
	// handshakes is bounded too.
	tlsConf := id.TLSConfig()
	wrap := func(ln net.Listener) net.Listener { return hav1.Listener(httpserve.Limit(ln), tlsConf) }
	sup.Restarting(ctx, "home-automation API", func(ctx context.Context) error {
		httpserve.Serve(ctx, s.http, s.ln, s.cfg.Listen, wrap, log)
		return nil
	})
	sup.Restarting(ctx, "home-automation certificate", func(ctx context.Context) error {
		tick := s.cfg.CertCheck
		if tick == nil {
			t := time.NewTicker(CheckEvery)
			defer t.Stop()
			tick = t.C
		}
		s.srv.KeepCertificate(ctx, tick, func(renewed bool, err error) {
			if err != nil {
				log.Error("home-automation certificate", "error", err)
			} else {
				log.Info("home-automation certificate renewed", "valid_until", id.Leaf().NotAfter)
			}
		})
		return nil
	})
}

// Announcer keeps a service announced over mDNS until ctx ends, reporting
// each change of its success (netclient.Client: netd, the box's one mDNS
// responder).
type Announcer interface {
	KeepAnnounced(ctx context.Context, svc netapi.Service, interval time.Duration, report func(error))
}

// Announce has netd announce the API as _mupibox._tcp (Home Assistant's
// discovery) under sup for as long as ctx lasts, starting it again should
// it fail; without netd (nil) it is not announced.
func (s *Service) Announce(ctx context.Context, sup *daemon.Group, netd Announcer, log *slog.Logger) {
	if netd == nil {
		log.Info("home-automation API not announced by mDNS: no network service (-net)")
		return
	}
	base := hav1.MDNSService(s.cfg.Host, s.cfg.ID, s.port())
	sup.Restarting(ctx, "mDNS announcement", func(ctx context.Context) error {
		for ctx.Err() == nil {
			svc, complete := base, s.cfg.TXT == nil
			if !complete {
				if txt := s.cfg.TXT(ctx, base.Text); txt != nil {
					svc.Text, complete = txt, true
				}
			}
			actx, cancel := context.WithCancel(ctx)
			if !complete {
				// Announced without the further keys now, and again
				// with them once they are known.
				go func() {
					t := time.NewTicker(txtRetry)
					defer t.Stop()
					for {
						select {
						case <-actx.Done():
							return
						case <-t.C:
							if s.cfg.TXT(actx, base.Text) != nil {
								cancel()
								return
							}
						}
					}
				}()
			}
			netd.KeepAnnounced(actx, svc, 0, func(err error) {
				if err != nil {
					log.Warn("home-automation API not announced by netd", "error", err)
				} else {
					log.Info("home-automation API announced by netd", "service", svc.Type, "port", svc.Port)
				}
			})
			cancel()
			if complete {
				return nil
			}
		}
		return nil
	})
}

// Shutdown ends the server, giving requests in flight until ctx ends.
func (s *Service) Shutdown(ctx context.Context) error { return s.http.Shutdown(ctx) }
