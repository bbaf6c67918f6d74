// Package auth is the box's trust plane: the administrator password
// (argon2id, in its own file), server-side sessions, the per-address lockout
// of wrong passwords, the physical reset, the host names the box answers
// to, and the Caller that middleware attaches to every request.
package auth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// PasswordFile holds the administrator password's hash inside the data
// directory (mode 0600). Like every secret it is left out of backups.
const PasswordFile = "admin-password"

// maxWaiting bounds the logins queued for the argon2 gate; more are told
// to come back (429) at once instead of piling up goroutines.
const maxWaiting = 8

// Config is what a Manager is built from.
type Config struct {
	Dir    string // the data directory
	Params Params // for new hashes; zero: DefaultParams
	// Clock measures sessions and lockouts on its uptime: they are
	// durations, which a step of the wall clock must neither end early
	// nor extend. Nil: the machine's clock.
	Clock clock.Clock
}

// Manager owns the administrator password, the sessions and the lockout.
type Manager struct {
	dir    string
	params Params
	clock  clock.Clock
	// gate lets one argon2 computation run at a time: each takes
	// Params.Memory (64 MiB) and all four cores, so a login flood queues
	// here instead of exhausting the box's 512 MB.
	gate    chan struct{}
	waiting atomic.Int32
	// changing serialises password changes and resets, which write the
	// file. A change that finds another in progress is refused rather than
	// queued: each costs two argon2 runs, and while no password is set
	// anyone may send them.
	changing chan struct{}

	mu       sync.Mutex
	hash     *hash
	broken   error  // the stored file exists but is unusable: stay protected
	epoch    uint64 // counts password changes; a login checked against an older password gets no session
	sessions sessions
	fails    lockout
}

// New loads the stored password. An unreadable or corrupt file leaves the
// box protected (no login succeeds until the physical reset) and is
// returned as an error for the log alongside a working Manager.
func New(cfg Config) (*Manager, error) {
	m := &Manager{dir: cfg.Dir, params: cfg.Params, clock: cfg.Clock, gate: make(chan struct{}, 1),
		changing: make(chan struct{}, 1), sessions: sessions{}, fails: lockout{}}
	if m.params == (Params{}) {
		m.params = DefaultParams
	}
	if err := m.params.check(); err != nil {
		return nil, err
	}
	if m.clock == nil {
		m.clock = clock.NewSystem()
	}
	data, err := os.ReadFile(m.path())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return m, nil
	case err != nil:
		m.broken = err
	default:
		h, perr := parseHash(string(data))
		if perr != nil {
			m.broken = perr
		} else {
			m.hash = &h
		}
	}
	if m.broken != nil {
		return m, fmt.Errorf("administrator password file %s: %w; no login is possible until it is reset on the box", PasswordFile, m.broken)
	}
	return m, nil
}

func (m *Manager) path() string { return filepath.Join(m.dir, PasswordFile) }

// Protected reports whether an administrator password is set.
func (m *Manager) Protected() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hash != nil || m.broken != nil
}

// Valid reports whether tok is a live session.
func (m *Manager) Valid(tok string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sessions.valid(tok, m.clock.Uptime())
}

// Login checks password for a client at addr and starts a session.
func (m *Manager) Login(ctx context.Context, addr netip.Addr, password string) (Session, error) {
	m.mu.Lock()
	h, broken, epoch := m.hash, m.broken, m.epoch
	m.mu.Unlock()
	switch {
	case broken != nil:
		return Session{}, errBroken
	case h == nil:
		return Session{}, fault.New(fault.Conflict, "admin password is not configured")
	}
	ok, err := m.check(ctx, addr, *h, password)
	if err != nil {
		return Session{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ok || m.epoch != epoch {
		return Session{}, fault.New(fault.Unauthorized, "invalid password").Coded("wrong_password")
	}
	return m.sessions.add(m.clock.Uptime()), nil
}

var errBroken = fault.New(fault.Internal, "the stored administrator password is unreadable; reset it on the box")

// Logout ends every session, as the real box does: logging out on one
// device is how a parent makes sure no forgotten device stays logged in.
func (m *Manager) Logout() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions.clear()
}

// SetPassword sets the first password (current is ignored while none is
// set) or changes it (current must match; the API also demands a session
// then). Every session ends; the caller gets a new one.
func (m *Manager) SetPassword(ctx context.Context, addr netip.Addr, current, next string) (Session, error) {
	if err := checkNewPassword(next); err != nil {
		return Session{}, err
	}
	select {
	case m.changing <- struct{}{}:
		defer func() { <-m.changing }()
	default:
		return Session{}, fault.Retry(fault.Busy, time.Second, "another password change is in progress")
	}
	m.mu.Lock()
	h, broken := m.hash, m.broken
	m.mu.Unlock()
	if broken != nil {
		return Session{}, errBroken
	}
	if h != nil {
		ok, err := m.check(ctx, addr, *h, current)
		if err != nil {
			return Session{}, err
		}
		if !ok {
			return Session{}, fault.New(fault.Forbidden, "current password is invalid")
		}
	}
	var nh hash
	if err := m.argon2(ctx, func() { nh = newHash(next, m.params) }); err != nil {
		return Session{}, err
	}
	if err := state.WriteFile(m.path(), []byte(nh.String()+"\n")); err != nil {
		return Session{}, fault.Wrap(fault.Internal, err, "cannot save the password")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hash, m.epoch = &nh, m.epoch+1
	m.sessions.clear()
	return m.sessions.add(m.clock.Uptime()), nil
}

// Reset removes the password and ends every session. Only the physical
// reset calls it; no route does.
func (m *Manager) Reset() error {
	m.changing <- struct{}{}
	defer func() { <-m.changing }()
	// Durably: a power cut right after a reset must not bring the old
	// password back.
	if err := state.Remove(m.path()); err != nil {
		return fmt.Errorf("remove the administrator password: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hash, m.broken, m.epoch = nil, nil, m.epoch+1
	m.sessions.clear()
	clear(m.fails)
	return nil
}

// check compares password with h for a client at addr, counting the
// outcome against the address.
func (m *Manager) check(ctx context.Context, addr netip.Addr, h hash, password string) (bool, error) {
	m.mu.Lock()
	err := m.fails.begin(addr, m.clock.Uptime())
	m.mu.Unlock()
	if err != nil {
		return false, err
	}
	o := neutral
	defer func() {
		m.mu.Lock()
		m.fails.end(addr, o, m.clock.Uptime())
		m.mu.Unlock()
	}()
	ok := false
	if err := m.argon2(ctx, func() { ok = h.matches(password) }); err != nil {
		return false, err
	}
	o = failed
	if ok {
		o = succeeded
	}
	return ok, nil
}

// argon2 runs f, which computes one argon2 hash, through the gate.
func (m *Manager) argon2(ctx context.Context, f func()) error {
	if m.waiting.Add(1) > maxWaiting {
		m.waiting.Add(-1)
		return errTooMany(time.Second)
	}
	select {
	case m.gate <- struct{}{}:
		m.waiting.Add(-1)
	case <-ctx.Done():
		m.waiting.Add(-1)
		return fault.Wrap(fault.Busy, ctx.Err(), "request ended while waiting for the password check")
	}
	defer func() { <-m.gate }()
	f()
	return nil
}
