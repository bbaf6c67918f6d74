package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storybox/storybox/services/internal/fault"
	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes over the memory
	Threads uint8  // lanes, computed in parallel
}

// DefaultParams cost about 0.3 s on a Pi Zero 2 W: 64 MiB (the most the
// 512 MB box spends on it), one pass, four lanes for its four cores.
// BenchmarkVerify measures them; the README has the figures.
var DefaultParams = Params{Memory: 64 << 10, Time: 1, Threads: 4}

const (
	saltLen = 16
	keyLen  = 32
	// MinPasswordLen and MaxPasswordLen bound a new password, in characters.
	MinPasswordLen = 10
	MaxPasswordLen = 128
	// maxMemory refuses stored parameters that would cost the box more
	// memory than DefaultParams: a hand-edited file must not make a login
	// exhaust 512 MB.
	maxMemory = 64 << 10
)

var b64 = base64.RawStdEncoding

// hash is a parsed argon2id hash in PHC string format:
// $argon2id$v=19$m=65536,t=1,p=4$<salt>$<key> (standard base64, unpadded).
type hash struct {
	p         Params
	salt, key []byte
}

func newHash(password string, p Params) hash {
	salt := make([]byte, saltLen)
	_, _ = rand.Read(salt) // crypto/rand.Read never fails; it crashes the program instead
	return hash{p: p, salt: salt, key: argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, keyLen)}
}

func (h hash) String() string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.p.Memory, h.p.Time, h.p.Threads, b64.EncodeToString(h.salt), b64.EncodeToString(h.key))
}

// matches recomputes the key and compares in constant time.
func (h hash) matches(password string) bool {
	k := argon2.IDKey([]byte(password), h.salt, h.p.Time, h.p.Memory, h.p.Threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(k, h.key) == 1
}

var errFormat = errors.New("not an argon2id hash in PHC format")

// parseHash reads a PHC string, refusing parameters outside what the box
// can afford.
func parseHash(s string) (hash, error) {
	f := strings.Split(strings.TrimSpace(s), "$")
	if len(f) != 6 || f[0] != "" || f[1] != "argon2id" || f[2] != "v="+strconv.Itoa(argon2.Version) {
		return hash{}, errFormat
	}
	var h hash
	for _, kv := range strings.Split(f[3], ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return hash{}, errFormat
		}
		switch k {
		case "m":
			h.p.Memory = uint32(n)
		case "t":
			h.p.Time = uint32(n)
		case "p":
			if n > 255 {
				return hash{}, errFormat
			}
			h.p.Threads = uint8(n)
		default:
			return hash{}, errFormat
		}
	}
	if err := h.p.check(); err != nil {
		return hash{}, err
	}
	var err error
	if h.salt, err = b64.DecodeString(f[4]); err != nil || len(h.salt) < 8 || len(h.salt) > 64 {
		return hash{}, errFormat
	}
	if h.key, err = b64.DecodeString(f[5]); err != nil || len(h.key) < 16 || len(h.key) > 64 {
		return hash{}, errFormat
	}
	return h, nil
}

func (p Params) check() error {
	if p.Threads < 1 || p.Threads > 16 || p.Time < 1 || p.Time > 16 || p.Memory < 8*uint32(p.Threads) || p.Memory > maxMemory {
		return fmt.Errorf("argon2id parameters m=%d,t=%d,p=%d are outside what the box accepts", p.Memory, p.Time, p.Threads)
	}
	return nil
}

// checkNewPassword enforces the length rule, counted in characters.
func checkNewPassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	switch {
	case n < MinPasswordLen:
		return fault.New(fault.Invalid, "password must contain at least %d characters", MinPasswordLen).Coded("password_too_short")
	case n > MaxPasswordLen:
		return fault.New(fault.Invalid, "password must contain at most %d characters", MaxPasswordLen).Coded("password_too_long")
	}
	return nil
}
