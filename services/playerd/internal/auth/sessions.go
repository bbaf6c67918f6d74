package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

const (
	// CookieName is the session cookie, named as on the real box so its
	// admin page and apps keep working.
	CookieName = "mupibox_admin_session"
	// SessionTTL is how long a login lasts, counted from the login on the
	// clock's uptime: network time stepping the wall clock by hours (or
	// years, on a Pi that booted in 1970) neither logs everyone out nor
	// keeps a session alive for longer.
	SessionTTL = 12 * time.Hour
	// maxSessions bounds the table; a parent has a few devices, and a new
	// login beyond this ends the oldest session.
	maxSessions = 32
	tokenBytes  = 32
)

// Session is what a login hands to the client: the token for the cookie,
// which lasts SessionTTL (the cookie's Max-Age: the box's wall clock may be
// years off, so no expiry date is sent).
type Session struct {
	Token string
}

// sessions maps the SHA-256 of each token to its expiry, in uptime. Only hashes are
// kept, so a memory dump does not yield a usable cookie; the token has 256
// bits of entropy, so a fast hash is enough and the map lookup's timing
// tells nothing useful about any token.
type sessions map[[sha256.Size]byte]time.Duration

var tokenLen = base64.RawURLEncoding.EncodedLen(tokenBytes)

func (s sessions) add(now time.Duration) Session {
	for k, exp := range s {
		if now >= exp {
			delete(s, k)
		}
	}
	for len(s) >= maxSessions {
		var oldest [sha256.Size]byte
		first := time.Duration(-1)
		for k, exp := range s {
			if first < 0 || exp < first {
				oldest, first = k, exp
			}
		}
		delete(s, oldest)
	}
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // never fails; crashes the program instead
	tok := base64.RawURLEncoding.EncodeToString(b)
	s[sha256.Sum256([]byte(tok))] = now + SessionTTL
	return Session{Token: tok}
}

func (s sessions) valid(tok string, now time.Duration) bool {
	if len(tok) != tokenLen {
		return false
	}
	k := sha256.Sum256([]byte(tok))
	exp, ok := s[k]
	if ok && now >= exp {
		delete(s, k)
		return false
	}
	return ok
}

func (s sessions) clear() { clear(s) }
