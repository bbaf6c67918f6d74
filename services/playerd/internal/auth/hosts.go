package auth

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
)

// Hosts is the set of names the box answers to. A web page that rebinds its
// own DNS name to the box's address (DNS rebinding) reaches the box with
// its own name in the Host header; refusing names the box does not carry
// stops it, reads included. IP literals and localhost are always fine: a
// page can only send them when it was loaded from the box itself.
type Hosts struct {
	names atomic.Pointer[map[string]bool]
}

// NewHosts allows hostname, hostname.local (mDNS) and extra.
func NewHosts(hostname string, extra []string) *Hosts {
	h := &Hosts{}
	h.Set(hostname, extra)
	return h
}

// Set replaces the names, for settings a parent changes while the box runs
// (its host name, names from the router's DNS). A host name with a domain
// also allows its first label.
func (h *Hosts) Set(hostname string, extra []string) {
	m := map[string]bool{"localhost": true}
	if hostname = normalize(hostname); hostname != "" {
		m[hostname], m[hostname+".local"] = true, true
		if first, _, ok := strings.Cut(hostname, "."); ok && first != "" {
			m[first], m[first+".local"] = true, true
		}
	}
	for _, n := range extra {
		if n = normalize(n); n != "" {
			m[n] = true
		}
	}
	h.names.Store(&m)
}

// Allowed reports whether a request's Host header (name or IP literal,
// with or without port) names this box.
func (h *Hosts) Allowed(hostHeader string) bool {
	host, ok := splitHost(hostHeader)
	if !ok {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return (*h.names.Load())[normalize(host)]
}

// splitHost takes the port off a Host header; bracketed IPv6 literals lose
// their brackets. A port, when present, must be a number.
func splitHost(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", false
		}
		host, rest := s[1:end], s[end+1:]
		if rest != "" && (rest[0] != ':' || !validPort(rest[1:])) {
			return "", false
		}
		_, err := netip.ParseAddr(host)
		return host, err == nil
	}
	if host, port, err := net.SplitHostPort(s); err == nil {
		if !validPort(port) || strings.Contains(host, ":") {
			return "", false
		}
		return host, true
	}
	if strings.Contains(s, ":") {
		return "", false
	}
	return s, true
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// normalize lower-cases a name and drops the root's trailing dot
// ("storybox.local." is the same name).
func normalize(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}

// CheckHostName refuses what cannot be a DNS name, for names a parent or a
// flag adds: letters, digits and hyphens in dot-separated labels.
func CheckHostName(name string) error {
	n := normalize(name)
	if n == "" || len(n) > 253 {
		return fmt.Errorf("%q is not a host name", name)
	}
	for _, label := range strings.Split(n, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%q is not a host name", name)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("%q is not a host name", name)
			}
		}
	}
	return nil
}
