package auth

import (
	"net/netip"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

const (
	// maxFailures wrong passwords from one address lock it out for lockFor.
	maxFailures = 5
	lockFor     = 5 * time.Minute
	// failWindow: failures older than this are forgotten.
	failWindow = 5 * time.Minute
	// maxTracked bounds the table under a flood of source addresses
	// (IPv6 gives one host millions). Beyond it the least recently active
	// address is forgotten: an attacker with that many addresses gains
	// nothing over using fresh ones, and the argon2 gate (one verification
	// at a time) still bounds the guesses per second for everyone.
	maxTracked = 1024
)

func errTooMany(d time.Duration) error {
	return fault.Retry(fault.Busy, d, "too many login attempts; try again later")
}

type outcome int

const (
	neutral outcome = iota // the password was never checked (busy, client gone)
	failed
	succeeded
)

// attempts are one address's; times are the clock's uptime, so a step of
// the wall clock neither lifts a lockout nor makes it last longer.
type attempts struct {
	failures int
	pending  int           // checks in progress; they count against the limit
	last     time.Duration // the last failure
	until    time.Duration // locked out until then; 0: not locked out
}

// lockout counts failed password checks per client address.
type lockout map[netip.Addr]*attempts

// begin reserves a check for addr, or refuses with Retry-After while addr
// is locked out or already has as many checks in flight as it has tries
// left. Every successful begin is paired with one end.
func (l lockout) begin(addr netip.Addr, now time.Duration) error {
	a := l[addr]
	if a == nil {
		l.makeRoom(now)
		a = &attempts{}
		l[addr] = a
	}
	if now < a.until {
		return errTooMany(a.until - now)
	}
	if a.until != 0 || now-a.last >= failWindow {
		a.failures, a.until = 0, 0
	}
	if a.failures+a.pending >= maxFailures {
		return errTooMany(time.Second)
	}
	a.pending++
	return nil
}

func (l lockout) end(addr netip.Addr, o outcome, now time.Duration) {
	a := l[addr]
	if a == nil {
		return
	}
	a.pending--
	switch o {
	case succeeded:
		a.failures = 0
	case failed:
		a.failures++
		a.last = now
		if a.failures >= maxFailures {
			a.until = now + lockFor
		}
	}
	if a.failures == 0 && a.pending == 0 && a.until == 0 {
		delete(l, addr)
	}
}

// makeRoom drops what is no longer needed when the table is full, then the
// least recently active idle address.
func (l lockout) makeRoom(now time.Duration) {
	if len(l) < maxTracked {
		return
	}
	var victim netip.Addr
	var oldest time.Duration
	for addr, a := range l {
		if a.pending > 0 {
			continue
		}
		if now >= a.until && now-a.last >= failWindow {
			delete(l, addr)
			continue
		}
		if !victim.IsValid() || a.last < oldest {
			victim, oldest = addr, a.last
		}
	}
	if len(l) >= maxTracked && victim.IsValid() {
		delete(l, victim)
	}
}
