// Package pairing lets a home-automation client (Home Assistant) earn a
// scoped bearer token, the way the MuPiBox v1 contract describes it: a
// parent opens a short window with an administrator session, the client
// starts a pairing, the box shows a 6-digit code on its own screen only,
// and the client trades the code for a token. Tokens are stored as SHA-256
// hashes (they carry 256 random bits, so a slow hash adds nothing), survive
// restarts and stay valid until revoked.
package pairing

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/clock"
)

// Dir holds the home-automation secrets inside the data directory: the
// paired clients' token hashes (ClientsFile) and the API's TLS identity.
const Dir = "home-automation"

// ClientsFile is the paired clients inside Dir.
const ClientsFile = "clients.json"

// Limits of the contract.
const (
	DefaultWindow   = 60 * time.Second  // how long a parent's approval lets a pairing start
	DefaultLifetime = 300 * time.Second // how long a code is valid
	MaxAttempts     = 5                 // wrong codes before the pairing is void
	DefaultCooldown = 60 * time.Second  // after a void pairing, before the next may start
	CodeLength      = 6
)

// Errors the v1 API tells apart; each carries the kind of package fault
// and is matched with errors.Is.
var (
	ErrNotEnabled = fault.New(fault.Forbidden, "pairing is not enabled: allow it in the box's admin page first").Coded("pairing_not_enabled")
	ErrInProgress = fault.New(fault.Conflict, "another pairing is in progress").Coded("pairing_in_progress")
	ErrWrongCode  = fault.New(fault.Forbidden, "wrong pairing code")
	ErrExpired    = fault.New(fault.NotFound, "this pairing has expired or is no longer valid; start again")
	ErrNoScope    = fault.New(fault.Forbidden, "none of the requested scopes is allowed on the box")
	ErrBadToken   = fault.New(fault.Unauthorized, "missing, unknown or revoked token")
)

// Config configures a Manager.
type Config struct {
	File     string // the clients file (tokens hashed), mode 0600
	DeviceID string // the box's persistent id, returned with every token
	// Clock: the window, codes, cooldown and request budgets are
	// durations, on its uptime, so a step of the wall clock neither closes
	// them early nor keeps them open; the wall clock only stamps when a
	// client paired and was last seen. Nil: the machine's clock.
	Clock clock.Clock
	// Window, Lifetime and Cooldown default to the contract's values.
	Window, Lifetime, Cooldown time.Duration
	// OnChange is called (without locks held) when what the screen shows
	// changes (a window opened or closed, a code to show or to take away)
	// and when a client is revoked.
	OnChange func()
	// Requests per client: one every RequestEvery, RequestBurst at once.
	// Zero: 10 per second with a burst of 30, far above Home Assistant's
	// 4 requests every 5 s.
	RequestEvery time.Duration
	RequestBurst int
}

// Manager holds the approval window, the one pending pairing and the
// paired clients. Safe for concurrent use.
type Manager struct {
	cfg Config

	// Deadlines are uptimes; 0 is none.
	mu       sync.Mutex
	window   time.Duration // approval window open until
	allowed  []Scope       // what the parent allowed with the window
	pending  *pending
	cooldown time.Duration
	clients  []*client
	buckets  map[string]*Bucket // per client id
	starts   *Bucket            // pair/start, box-wide
	confirms *Bucket            // pair/confirm, box-wide across all sources

	changedMu sync.Mutex
	changed   chan struct{} // closed at the next change of what the screen shows
}

// Changed returns a channel that is closed at the next change of what the
// screen shows (Prompt): a window opened or closed, a code to show or to
// take away.
func (m *Manager) Changed() <-chan struct{} {
	m.changedMu.Lock()
	defer m.changedMu.Unlock()
	return m.changed
}

func (m *Manager) notify() {
	m.changedMu.Lock()
	close(m.changed)
	m.changed = make(chan struct{})
	m.changedMu.Unlock()
	m.cfg.OnChange()
}

type pending struct {
	id, clientID, clientName, code string
	requested, granted             []Scope
	expires                        time.Duration // uptime
	fails                          int
}

// New loads the paired clients. A corrupt file is returned as an error next
// to a working Manager without clients: the file stays for a parent to
// look at, and every client must pair again.
func New(cfg Config) (*Manager, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.NewSystem()
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = DefaultLifetime
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultCooldown
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func() {}
	}
	if cfg.RequestEvery <= 0 {
		cfg.RequestEvery = 100 * time.Millisecond
	}
	if cfg.RequestBurst <= 0 {
		cfg.RequestBurst = 30
	}
	m := &Manager{cfg: cfg, buckets: map[string]*Bucket{}, changed: make(chan struct{}),
		starts:   NewBucket(2*time.Second, 5),
		confirms: NewBucket(2*time.Second, 10)}
	clients, err := load(cfg.File)
	m.clients = clients
	return m, err
}

// DeviceID is the box's persistent id.
func (m *Manager) DeviceID() string { return m.cfg.DeviceID }

// Enable opens the approval window for the given scopes (nil: the
// default): for Window, one client may start a pairing, and is granted what
// it requested of these. It returns how long the window stays open.
func (m *Manager) Enable(allowed []Scope) (time.Duration, error) {
	if len(allowed) == 0 {
		allowed = DefaultScopes
	}
	m.mu.Lock()
	now := m.cfg.Clock.Uptime()
	m.expire(now)
	if m.pending != nil {
		m.mu.Unlock()
		return 0, ErrInProgress
	}
	m.window, m.allowed = now+m.cfg.Window, slices.Clone(allowed)
	m.mu.Unlock()
	m.notify()
	return m.cfg.Window, nil
}

// Cancel closes the window and voids a pending pairing: the parent
// changed their mind, or tapped Cancel on the screen.
func (m *Manager) Cancel() {
	m.mu.Lock()
	changed := m.pending != nil || m.cfg.Clock.Uptime() < m.window
	m.pending, m.window = nil, 0
	m.mu.Unlock()
	if changed {
		m.notify()
	}
}

// StartRequest is the body of POST /pair/start.
type StartRequest struct {
	ClientName      string   `json:"client_name"`
	ClientID        string   `json:"client_id"`
	RequestedScopes []string `json:"requested_scopes"`
}

// Started is the answer to a pairing start. The code is not in it: it is
// only on the box's screen.
type Started struct {
	PairingID    string `json:"pairing_id"`
	ExpiresIn    int    `json:"expires_in"`
	CodeLength   int    `json:"code_length"`
	Confirmation string `json:"confirmation"`
}

// Start begins a pairing when the parent's window is open; it takes the
// window, so each approval lets one client start.
func (m *Manager) Start(req StartRequest) (Started, error) {
	if err := checkClientID(req.ClientID); err != nil {
		return Started{}, err
	}
	name, err := checkClientName(req.ClientName)
	if err != nil {
		return Started{}, err
	}
	requested := DefaultScopes
	if req.RequestedScopes != nil {
		if requested, err = ParseScopes(req.RequestedScopes); err != nil {
			return Started{}, err
		}
	}
	m.mu.Lock()
	now := m.cfg.Clock.Uptime()
	changed := m.expire(now)
	p, err := m.start(now, req.ClientID, name, requested)
	m.mu.Unlock()
	if changed || err == nil {
		m.notify()
	}
	if err != nil {
		return Started{}, err
	}
	return Started{PairingID: p.id, ExpiresIn: int(m.cfg.Lifetime / time.Second), CodeLength: CodeLength, Confirmation: "display_code"}, nil
}

func (m *Manager) start(now time.Duration, clientID, name string, requested []Scope) (*pending, error) {
	if now < m.cooldown {
		return nil, fault.Retry(fault.Busy, m.cooldown-now, "too many wrong codes; try again later")
	}
	if ok, retry := m.starts.Take(now); !ok {
		return nil, fault.Retry(fault.Busy, retry, "too many pairing starts; try again later")
	}
	if m.pending != nil {
		return nil, ErrInProgress
	}
	if now >= m.window {
		return nil, ErrNotEnabled
	}
	granted := intersect(requested, m.allowed)
	if len(granted) == 0 {
		return nil, ErrNoScope
	}
	code, err := newCode()
	if err != nil {
		return nil, err
	}
	m.pending = &pending{id: uuid.NewString(), clientID: clientID, clientName: name, code: code,
		requested: requested, granted: granted, expires: now + m.cfg.Lifetime}
	m.window = 0
	return m.pending, nil
}

// ConfirmRequest is the body of POST /pair/confirm.
type ConfirmRequest struct {
	PairingID string `json:"pairing_id"`
	ClientID  string `json:"client_id"`
	Code      string `json:"code"`
}

// Grant is a new token and what it may do. AccessToken is shown this once.
type Grant struct {
	Success     bool     `json:"success"`
	AccessToken string   `json:"access_token"`
	TokenType   string   `json:"token_type"`
	Scopes      []string `json:"scopes"`
	DeviceID    string   `json:"device_id"`
}

// Confirm trades the code on the screen for a token. A wrong code or
// client counts against the pairing; the fifth voids it.
func (m *Manager) Confirm(req ConfirmRequest) (Grant, error) {
	// Only the documented whitespace is dropped; anything else that is not
	// six digits cannot be the code and is not counted as a guess.
	code := strings.ReplaceAll(req.Code, " ", "")
	if len(code) != CodeLength || strings.Trim(code, "0123456789") != "" {
		return Grant{}, fault.New(fault.Invalid, "code must be %d digits", CodeLength)
	}
	if req.PairingID == "" || req.ClientID == "" {
		return Grant{}, fault.New(fault.Invalid, "pairing_id and client_id are required")
	}
	m.mu.Lock()
	now := m.cfg.Clock.Uptime()
	changed := m.expire(now)
	g, voided, err := m.confirm(now, req, code)
	m.mu.Unlock()
	if changed || voided || err == nil {
		m.notify()
	}
	return g, err
}

func (m *Manager) confirm(now time.Duration, req ConfirmRequest, code string) (Grant, bool, error) {
	if ok, retry := m.confirms.Take(now); !ok {
		return Grant{}, false, fault.Retry(fault.Busy, retry, "too many pairing attempts; try again later")
	}
	p := m.pending
	if p == nil || subtle.ConstantTimeCompare([]byte(p.id), []byte(req.PairingID)) != 1 {
		return Grant{}, false, ErrExpired
	}
	codeOK := subtle.ConstantTimeCompare([]byte(p.code), []byte(code))
	clientOK := subtle.ConstantTimeCompare([]byte(p.clientID), []byte(req.ClientID))
	if codeOK&clientOK != 1 {
		p.fails++
		if p.fails >= MaxAttempts {
			m.pending = nil
			m.cooldown = now + m.cfg.Cooldown
			return Grant{}, true, ErrWrongCode
		}
		return Grant{}, false, ErrWrongCode
	}
	token, err := newToken()
	if err != nil {
		return Grant{}, false, err
	}
	c := &client{ID: p.clientID, Name: p.clientName, Scopes: p.granted, Hash: hashToken(token), PairedAt: m.cfg.Clock.Now().UTC()}
	next := []*client{c}
	for _, o := range m.clients {
		if o.ID != c.ID { // one token per client: pairing again replaces it
			next = append(next, o)
		}
	}
	if err := save(m.cfg.File, next); err != nil {
		// The code stays valid: a token that would not survive a restart
		// is not handed out.
		return Grant{}, false, err
	}
	m.clients = next
	delete(m.buckets, c.ID)
	m.pending = nil
	return Grant{Success: true, AccessToken: token, TokenType: "Bearer", Scopes: Strings(c.Scopes), DeviceID: m.cfg.DeviceID}, true, nil
}

// expire drops a pending pairing or window whose time is up, and reports
// whether the screen must change. Called with mu held.
func (m *Manager) expire(now time.Duration) bool {
	changed := false
	if m.pending != nil && now >= m.pending.expires {
		m.pending, changed = nil, true
	}
	if m.window != 0 && now >= m.window {
		m.window, changed = 0, true
	}
	return changed
}

// Prompt is what the box's screen shows while pairing: the window waiting
// for a client, or the code. It never leaves the box.
type Prompt struct {
	Code       string // "" while the window waits for a client
	ClientName string
	Requested  []Scope
	Granted    []Scope
	Left       time.Duration // until the prompt goes away by itself
}

// Prompt returns what the screen should show now, or nil.
func (m *Manager) Prompt() *Prompt {
	m.mu.Lock()
	now := m.cfg.Clock.Uptime()
	changed := m.expire(now)
	var p *Prompt
	switch {
	case m.pending != nil:
		p = &Prompt{Code: m.pending.code, ClientName: m.pending.clientName, Requested: m.pending.requested,
			Granted: m.pending.granted, Left: m.pending.expires - now}
	case m.window != 0:
		p = &Prompt{Granted: m.allowed, Left: m.window - now}
	}
	m.mu.Unlock()
	if changed {
		m.notify()
	}
	return p
}

// Status is the pairing state for the admin API; it never has the code.
type Status struct {
	WindowOpen bool           `json:"window_open"`
	WindowLeft int            `json:"window_expires_in"` // seconds
	Allowed    []string       `json:"allowed_scopes"`
	Pending    *PendingStatus `json:"pending"`
	Clients    []ClientInfo   `json:"clients"`
}

// PendingStatus describes a pairing waiting for its code.
type PendingStatus struct {
	ClientName string   `json:"client_name"`
	ClientID   string   `json:"client_id"`
	Requested  []string `json:"requested_scopes"`
	Granted    []string `json:"scopes"`
	ExpiresIn  int      `json:"expires_in"`
}

// Status reports the window, the pending pairing and the clients.
func (m *Manager) Status() Status {
	m.mu.Lock()
	now := m.cfg.Clock.Uptime()
	changed := m.expire(now)
	s := Status{WindowOpen: m.window != 0, Allowed: Strings(m.allowed), Clients: m.infos()}
	if s.WindowOpen {
		s.WindowLeft = seconds(m.window - now)
	} else {
		s.Allowed = []string{}
	}
	if p := m.pending; p != nil {
		s.Pending = &PendingStatus{ClientName: p.clientName, ClientID: p.clientID, Requested: Strings(p.requested),
			Granted: Strings(p.granted), ExpiresIn: seconds(p.expires - now)}
	}
	m.mu.Unlock()
	if changed {
		m.notify()
	}
	return s
}

func seconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("pairing: code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// TokenBytes is the entropy of a token: 256 bits.
const TokenBytes = 32

func newToken() (string, error) {
	b := make([]byte, TokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("pairing: token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func checkClientID(id string) error {
	if id == "" {
		return fault.New(fault.Invalid, "client_id is required")
	}
	if len(id) > 128 || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") != "" {
		return fault.New(fault.Invalid, "client_id must be at most 128 letters, digits and -_.:")
	}
	return nil
}

// checkClientName keeps names printable and short: they are drawn on the
// screen and listed to the parent.
func checkClientName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", fault.New(fault.Invalid, "client_name is required")
	}
	if len([]rune(name)) > 64 {
		return "", fault.New(fault.Invalid, "client_name is longer than 64 characters")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return "", fault.New(fault.Invalid, "client_name has control characters")
		}
	}
	return name, nil
}
