package box

import (
	"crypto/x509"
	"net/netip"
	"path/filepath"
	"sync/atomic"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
)

// HomeAutomation is the home-automation API as the rest of the box meets
// it: the pairing (the window a parent opens in the admin API, the code
// the screen shows, the clients the API serves) is the core's, and the
// API's surface (haserve) tells here, once it serves, what a parent needs
// to check: its key's fingerprint, its certificate and its port. The admin
// API, the screen and the home-automation API each take this facet, never
// one another.
type HomeAutomation struct {
	pairing *pairing.Manager // nil: the box has no id, the API stays off
	device  string
	served  atomic.Pointer[served]
}

// Identity is what the home-automation API serves with: its key's
// fingerprint and its current certificate (pki.Identity).
type Identity interface {
	Fingerprint() string
	Leaf() *x509.Certificate
}

type served struct {
	id   Identity
	port int
}

// ErrHomeAutomationOff answers the admin area while the API is off.
var ErrHomeAutomationOff = fault.New(fault.Unavailable, "the home-automation API is off (see the log)")

// openHomeAutomation loads the paired clients (home-automation/clients.json).
// Without a box id there is no pairing; a file that cannot be read leaves
// no clients, and every client pairs again.
func (b *Box) openHomeAutomation() {
	b.ha = &HomeAutomation{device: b.id}
	if b.id == "" {
		return
	}
	m, err := pairing.New(pairing.Config{File: filepath.Join(b.cfg.Data, pairing.Dir, pairing.ClientsFile),
		DeviceID: b.id, Clock: b.clock, OnChange: b.notify.section(SectionHomeAutomation)})
	if err != nil {
		b.log.Warn("home automation: paired clients unreadable; they must pair again", "error", err)
	}
	b.ha.pairing = m
}

// HomeAutomation is the facet of the home-automation API.
func (b *Box) HomeAutomation() *HomeAutomation { return b.ha }

// Pairing is the pairing itself, for the API that serves it; nil without
// a box id.
func (h *HomeAutomation) Pairing() *pairing.Manager { return h.pairing }

// Serving is the API's surface telling that it serves, with id on port.
func (h *HomeAutomation) Serving(id Identity, port int) {
	h.served.Store(&served{id: id, port: port})
}

func (h *HomeAutomation) on() (*served, bool) {
	s := h.served.Load()
	return s, s != nil && h.pairing != nil
}

// Status is GET /api/admin/ha: what a parent needs to pair and to see who
// is paired. Never a code or a token.
func (h *HomeAutomation) Status() (any, error) {
	s, ok := h.on()
	if !ok {
		return nil, ErrHomeAutomationOff
	}
	st := h.pairing.Status()
	out := map[string]any{
		"fingerprint": s.id.Fingerprint(),
		"device_id":   h.device,
		"port":        s.port,
		"pairing":     map[string]any{"window_open": st.WindowOpen, "window_expires_in": st.WindowLeft, "allowed_scopes": st.Allowed, "pending": st.Pending},
		"clients":     st.Clients,
	}
	if leaf := s.id.Leaf(); leaf != nil {
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

// Enable opens the pairing window for the named scopes (nil: the default).
func (h *HomeAutomation) Enable(scopes []string) (any, error) {
	if _, ok := h.on(); !ok {
		return nil, ErrHomeAutomationOff
	}
	return h.pairing.EnableNamed(scopes)
}

// Cancel closes the pairing window and voids a pending pairing: the
// parent changed their mind in the admin page or on the screen.
func (h *HomeAutomation) Cancel() error {
	if _, ok := h.on(); !ok {
		return ErrHomeAutomationOff
	}
	h.pairing.Cancel()
	return nil
}

// Revoke removes a paired client.
func (h *HomeAutomation) Revoke(clientID string) error {
	if _, ok := h.on(); !ok {
		return ErrHomeAutomationOff
	}
	return h.pairing.Revoke(clientID)
}

// Prompt is what the screen shows while pairing, or nil: the code lives
// here and on the screen only.
func (h *HomeAutomation) Prompt() *pairing.Prompt {
	if _, ok := h.on(); !ok {
		return nil
	}
	return h.pairing.Prompt()
}

// Changed is closed when what the screen shows of the pairing changes;
// nil (never) while the API is off.
func (h *HomeAutomation) Changed() <-chan struct{} {
	if h.pairing == nil {
		return nil
	}
	return h.pairing.Changed()
}

// Fingerprint is the API key's fingerprint the screen shows with a code,
// "" while the API is off.
func (h *HomeAutomation) Fingerprint() string {
	if s, ok := h.on(); ok {
		return s.id.Fingerprint()
	}
	return ""
}
