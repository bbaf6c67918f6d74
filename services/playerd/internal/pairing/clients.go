package pairing

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// client is one paired client as the clients file keeps it.
type client struct {
	ID       string    `json:"client_id"`
	Name     string    `json:"client_name"`
	Scopes   []Scope   `json:"scopes"`
	Hash     string    `json:"token_sha256"` // hex
	PairedAt time.Time `json:"paired_at"`
	LastUsed time.Time `json:"last_used,omitzero"`
	// savedAt is the uptime when LastUsed was last written, if it was in
	// this run: last use is written at most once per lastUsedEvery (of
	// uptime, so a step of the wall clock changes nothing), not on every
	// request to the SD card.
	savedAt time.Duration
	saved   bool
}

const lastUsedEvery = time.Hour

type clientsFile struct {
	Version int       `json:"version"`
	Clients []*client `json:"clients"`
}

func load(path string) ([]*client, error) {
	var f clientsFile
	err := state.ReadJSON(path, &f)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pairing: paired clients: %w", err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("pairing: paired clients: unknown version %d", f.Version)
	}
	var out []*client
	for _, c := range f.Clients {
		if c == nil || checkClientID(c.ID) != nil || len(c.Hash) != 2*sha256.Size {
			continue // a damaged entry: that client pairs again
		}
		out = append(out, c)
	}
	return out, nil
}

func save(path string, cs []*client) error {
	if err := state.WriteJSON(path, clientsFile{Version: 1, Clients: cs}); err != nil {
		return fault.Wrap(fault.Internal, err, "the pairing could not be saved")
	}
	return nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Client is who a valid token belongs to.
type Client struct {
	ID     string
	Name   string
	Scopes []Scope
}

// Has reports whether the client was granted s.
func (c Client) Has(s Scope) bool { return slices.Contains(c.Scopes, s) }

// Authenticate returns the client of a bearer token and charges its
// request budget. Every stored hash is compared, in constant time, so the
// answer takes as long for any token.
func (m *Manager) Authenticate(token string) (Client, error) {
	if token == "" {
		return Client{}, ErrBadToken
	}
	h := []byte(hashToken(token))
	m.mu.Lock()
	defer m.mu.Unlock()
	var found *client
	for _, c := range m.clients {
		if subtle.ConstantTimeCompare(h, []byte(c.Hash)) == 1 {
			found = c
		}
	}
	if found == nil {
		return Client{}, ErrBadToken
	}
	up := m.cfg.Clock.Uptime()
	b := m.buckets[found.ID]
	if b == nil {
		b = NewBucket(m.cfg.RequestEvery, m.cfg.RequestBurst)
		m.buckets[found.ID] = b
	}
	if ok, retry := b.Take(up); !ok {
		return Client{}, fault.Retry(fault.Busy, retry, "too many requests from this client")
	}
	found.LastUsed = m.cfg.Clock.Now().UTC()
	if !found.saved || up-found.savedAt >= lastUsedEvery {
		// Best effort: a failed write only loses the last-use time.
		if save(m.cfg.File, m.clients) == nil {
			found.savedAt, found.saved = up, true
		}
	}
	return Client{ID: found.ID, Name: found.Name, Scopes: slices.Clone(found.Scopes)}, nil
}

// Revoke removes a client; its token stops working at once.
func (m *Manager) Revoke(clientID string) error {
	if err := m.revoke(clientID); err != nil {
		return err
	}
	m.notify()
	return nil
}

func (m *Manager) revoke(clientID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.IndexFunc(m.clients, func(c *client) bool { return c.ID == clientID })
	if i < 0 {
		return fault.New(fault.NotFound, "no paired client %q", clientID)
	}
	next := slices.Delete(slices.Clone(m.clients), i, i+1)
	if err := save(m.cfg.File, next); err != nil {
		return err
	}
	m.clients = next
	delete(m.buckets, clientID)
	return nil
}

// ClientInfo is a paired client as the parent sees it.
type ClientInfo struct {
	ClientID   string     `json:"client_id"`
	ClientName string     `json:"client_name"`
	Scopes     []string   `json:"scopes"`
	PairedAt   time.Time  `json:"paired_at"`
	LastUsed   *time.Time `json:"last_used"`
}

// Clients lists the paired clients, newest first.
func (m *Manager) Clients() []ClientInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.infos()
}

func (m *Manager) infos() []ClientInfo {
	out := make([]ClientInfo, 0, len(m.clients))
	for _, c := range m.clients {
		ci := ClientInfo{ClientID: c.ID, ClientName: c.Name, Scopes: Strings(c.Scopes), PairedAt: c.PairedAt}
		if !c.LastUsed.IsZero() {
			t := c.LastUsed
			ci.LastUsed = &t
		}
		out = append(out, ci)
	}
	return out
}
