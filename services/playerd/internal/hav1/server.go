package hav1

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
	"github.com/storybox/storybox/services/playerd/internal/pki"
)

// The home-automation API's own state on the box: its TLS identity (a CA
// and a server certificate that follows the box's names and addresses).
// The paired clients are the core's (box.HomeAutomation), where the local
// admin API opens pairing and the screen shows the code.

// ServerConfig says where the secrets are and what the box is called.
type ServerConfig struct {
	// Dir holds the CA and server keys (0600).
	Dir      string
	DeviceID string
	// Host is the box's host name; Names are the further names it answers
	// to. The certificate carries them all, and localhost.
	Host  string
	Names []string
	// Pairing is the core's (box.HomeAutomation): the window, the code the
	// screen shows and the paired clients.
	Pairing *pairing.Manager
	// Clock dates the certificates (wall time) and times the pairing
	// window and codes (uptime). Nil: the machine's clock.
	Clock clock.Clock
	// Addresses lists the box's addresses for the certificate; nil:
	// pki.Addresses, the machine's interfaces.
	Addresses func() ([]netip.Addr, error)
}

// Server is the API's identity and its paired clients.
type Server struct {
	addrs   func() ([]netip.Addr, error)
	id      *pki.Identity
	pairing *pairing.Manager
	names   []string
}

// Open opens the TLS identity and the paired clients. A nil Server means
// the API must stay off (err says why); a Server with an error works, but
// something was lost that the log should tell (a replaced identity: clients
// pair again; an unreadable clients file; a certificate not yet issued).
func Open(cfg ServerConfig) (*Server, error) {
	if cfg.DeviceID == "" || cfg.Pairing == nil {
		return nil, errors.New("the box has no saved id")
	}
	id, err := pki.Open(pki.Config{Dir: cfg.Dir, Name: cfg.Host, Clock: cfg.Clock})
	if id == nil {
		return nil, fmt.Errorf("no TLS identity: %w", err)
	}
	var problems []error
	if err != nil {
		problems = append(problems, fmt.Errorf("TLS identity replaced; paired clients must pair again: %w", err))
	}
	s := &Server{addrs: cfg.Addresses, id: id, pairing: cfg.Pairing, names: certNames(cfg.Host, cfg.Names)}
	if s.addrs == nil {
		s.addrs = pki.Addresses
	}
	if _, err := s.Renew(); err != nil {
		problems = append(problems, fmt.Errorf("certificate: %w", err))
	}
	return s, errors.Join(problems...)
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

// Identity is the TLS identity the listener serves.
func (s *Server) Identity() *pki.Identity { return s.id }

// Pairing is the approval window and the paired clients.
func (s *Server) Pairing() *pairing.Manager { return s.pairing }

// Renew issues a new server certificate when the box's addresses or names
// changed or the certificate is due; renewed reports that it did.
func (s *Server) Renew() (renewed bool, err error) {
	addrs, err := s.addrs()
	if err != nil {
		return false, err
	}
	return s.id.Ensure(pki.Hosts{Names: s.names, Addrs: addrs})
}

// KeepCertificate renews the certificate whenever tick fires (a new DHCP
// lease gets a certificate within one tick) until ctx ends; report hears
// each renewal and each failure.
func (s *Server) KeepCertificate(ctx context.Context, tick <-chan time.Time, report func(renewed bool, err error)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		if renewed, err := s.Renew(); err != nil || renewed {
			report(renewed, err)
		}
	}
}
