// Package store keeps netd's known networks and the regulatory country in
// one file under /perm, mode 0600, because it holds Wi-Fi passphrases:
// they are read by netd only, never served or logged. Every change is
// written atomically (temporary file, fsync, rename), so a power cut keeps
// either the old or the new list, never a torn one.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/storybox/storybox/services/internal/atomicfile"
	"github.com/storybox/storybox/services/internal/fault"
)

// FileName is the file in the state directory.
const FileName = "networks.json"

// Network is one known network. PSK is empty for an open network.
type Network struct {
	SSID     string `json:"ssid"`
	PSK      string `json:"psk,omitempty"`
	Priority int    `json:"priority"`
}

type file struct {
	Country  string    `json:"country,omitempty"`
	Networks []Network `json:"networks"`
}

// Store is the known networks. Safe for concurrent use.
type Store struct {
	path string
	mu   sync.Mutex
	f    file
}

// Open reads dir/networks.json; a missing file is an empty store. The
// directory is made (0700) on the first write.
func Open(dir string) (*Store, error) {
	s := &Store{path: filepath.Join(dir, FileName)}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("known networks: %w", err)
	}
	if err := json.Unmarshal(b, &s.f); err != nil {
		// Not fatal: netd runs with no known networks and a later save
		// replaces the broken file. The message names no passphrase.
		s.f = file{}
		return s, fmt.Errorf("known networks: %s is not valid JSON; starting with none", s.path)
	}
	var valid []Network
	for _, n := range s.f.Networks {
		if Validate(n.SSID, n.PSK) == nil {
			valid = append(valid, n)
		}
	}
	s.f.Networks = valid
	if CheckCountry(s.f.Country) != nil {
		s.f.Country = ""
	}
	return s, nil
}

// Validate checks a network name and passphrase as WPA2 defines them: an
// SSID of 1–32 bytes, a passphrase of 8–63 printable ASCII characters or
// 64 hex digits (a raw key), or none for an open network.
func Validate(ssid, psk string) error {
	if ssid == "" || len(ssid) > 32 {
		return fault.New(fault.Invalid, "ssid must be 1 to 32 bytes")
	}
	if psk == "" {
		return nil
	}
	if len(psk) == 64 && isHex(psk) {
		return nil
	}
	if len(psk) < 8 || len(psk) > 63 {
		return fault.New(fault.Invalid, "password must be 8 to 63 characters (or 64 hex digits)")
	}
	for _, c := range []byte(psk) {
		if c < 0x20 || c > 0x7e {
			return fault.New(fault.Invalid, "password may contain printable ASCII characters only")
		}
	}
	return nil
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// CheckCountry accepts an ISO 3166-1 alpha-2 code in capitals, "00" (the
// world domain) or empty (keep the kernel's).
func CheckCountry(c string) error {
	if c == "" || c == "00" || len(c) == 2 && 'A' <= c[0] && c[0] <= 'Z' && 'A' <= c[1] && c[1] <= 'Z' {
		return nil
	}
	return fault.New(fault.Invalid, "country must be a two-letter code such as DE or GB")
}

// Networks returns the known networks, highest priority first.
func (s *Store) Networks() []Network {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.f.Networks)
	slices.SortStableFunc(out, func(a, b Network) int { return b.Priority - a.Priority })
	return out
}

// Lookup returns the known network named ssid.
func (s *Store) Lookup(ssid string) (Network, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.f.Networks, func(n Network) bool { return n.SSID == ssid })
	if i < 0 {
		return Network{}, false
	}
	return s.f.Networks[i], true
}

// Put adds n or replaces the network of the same name, and saves.
func (s *Store) Put(n Network) error {
	if err := Validate(n.SSID, n.PSK); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.f
	next.Networks = slices.DeleteFunc(slices.Clone(s.f.Networks), func(o Network) bool { return o.SSID == n.SSID })
	next.Networks = append(next.Networks, n)
	return s.save(next)
}

// Forget removes the network named ssid; fault.NotFound if it is not known.
func (s *Store) Forget(ssid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.f
	next.Networks = slices.DeleteFunc(slices.Clone(s.f.Networks), func(o Network) bool { return o.SSID == ssid })
	if len(next.Networks) == len(s.f.Networks) {
		return fault.New(fault.NotFound, "no known network of that name")
	}
	return s.save(next)
}

// Country is the saved regulatory country; empty when none was set.
func (s *Store) Country() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Country
}

// SetCountry saves the regulatory country.
func (s *Store) SetCountry(c string) error {
	if err := CheckCountry(c); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.f
	next.Country = c
	return s.save(next)
}

// save writes next and, once it is on disk, makes it current.
func (s *Store) save(next file) error {
	if next.Networks == nil {
		next.Networks = []Network{}
	}
	b, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteSecret(s.path, append(b, '\n')); err != nil {
		return fault.Wrap(fault.Internal, err, "known networks could not be saved")
	}
	s.f = next
	return nil
}

// WriteSecret writes data to path atomically with mode 0600, making its
// directory (0700) when missing.
func WriteSecret(path string, data []byte) error { return atomicfile.Write(path, data, 0o600) }

// Import is a wifi.json that a parent puts on the SD card's boot partition
// or that `make image WIFI_SSID=… WIFI_PSK=…` writes: gokrazy/wifi's
// {"ssid","psk"}, or a list with priorities and the country.
type Import struct {
	SSID     string    `json:"ssid"`
	PSK      string    `json:"psk"`
	Country  string    `json:"country"`
	Networks []Network `json:"networks"`
}

// ParseImport reads a wifi.json. Errors never quote the file.
func ParseImport(b []byte) (Import, error) {
	var im Import
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&im); err != nil {
		return im, fault.New(fault.Invalid, "wifi.json is not valid: want {\"ssid\":…,\"psk\":…} or {\"networks\":[…]}")
	}
	if im.SSID != "" {
		im.Networks = append(im.Networks, Network{SSID: im.SSID, PSK: im.PSK, Priority: 0})
	}
	if len(im.Networks) == 0 && im.Country == "" {
		return im, fault.New(fault.Invalid, "wifi.json names no network")
	}
	for _, n := range im.Networks {
		if err := Validate(n.SSID, n.PSK); err != nil {
			return im, fmt.Errorf("wifi.json: %w", err)
		}
	}
	if err := CheckCountry(im.Country); err != nil {
		return im, fmt.Errorf("wifi.json: %w", err)
	}
	return im, nil
}

// Apply adds the imported networks (replacing those of the same name) and
// the country, in one write.
func (s *Store) Apply(im Import) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.f
	next.Networks = slices.Clone(s.f.Networks)
	for _, n := range im.Networks {
		next.Networks = slices.DeleteFunc(next.Networks, func(o Network) bool { return o.SSID == n.SSID })
		next.Networks = append(next.Networks, n)
	}
	if im.Country != "" {
		next.Country = im.Country
	}
	return s.save(next)
}
