// Package pki is the box's own TLS identity for the home-automation API: a
// private certificate authority (ECDSA P-256) made on first start, and a
// server certificate it signs for the box's names and addresses. Both keys
// stay in files of mode 0600 in the data directory. The server key is kept
// across renewals, so its SHA-256 SPKI fingerprint, which a parent compares
// on the box's screen, never changes; clients that trust the CA keep
// working across every renewal.
package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Files inside Config.Dir.
const (
	CAFile      = "ca.pem"
	CAKeyFile   = "ca-key.pem"
	LeafFile    = "server.pem"
	LeafKeyFile = "server-key.pem"
)

// Defaults of Config.
const (
	DefaultValidity    = 90 * 24 * time.Hour
	DefaultRenewBefore = 30 * 24 * time.Hour
)

// The CA's validity is fixed and wide: the box has no real-time clock, so
// at its first start its clock may be years off, and a CA that expired or
// is not yet valid would undo every pairing. The server certificate carries
// the real clock and is renewed when the clock turns out to have been wrong
// (Ensure says when).
var (
	caNotBefore = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	caNotAfter  = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC) // RFC 5280: no well-defined expiry
)

// Config says where the identity lives and how long certificates last.
type Config struct {
	Dir  string // created 0700 if missing
	Name string // the CA's common name, e.g. "storybox kinderzimmer"
	// Clock's wall clock dates the certificates: their validity is
	// calendar time. Nil: the machine's clock.
	Clock       clock.Clock
	Validity    time.Duration // of a server certificate; 0: DefaultValidity
	RenewBefore time.Duration // renew this long before expiry; 0: DefaultRenewBefore
}

// Identity is the CA and the current server certificate. Safe for
// concurrent use; the TLS listener reads the certificate on every
// handshake, so a renewal needs no restart.
type Identity struct {
	cfg    Config
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
	key    *ecdsa.PrivateKey
	spki   string
	mu     sync.Mutex // serialises Ensure
	leaf   atomic.Pointer[tls.Certificate]
	hosts  atomic.Pointer[Hosts]
	issued atomic.Int64 // how many server certificates this Identity made
}

// Hosts are the names and addresses a server certificate is valid for.
type Hosts struct {
	Names []string
	Addrs []netip.Addr
}

// normal sorts and de-duplicates, so two equal sets compare equal.
func (h Hosts) normal() Hosts {
	names := make([]string, 0, len(h.Names))
	for _, n := range h.Names {
		if n = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(n)), "."); n != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	addrs := make([]netip.Addr, 0, len(h.Addrs))
	for _, a := range h.Addrs {
		if a.IsValid() {
			addrs = append(addrs, a.Unmap().WithZone(""))
		}
	}
	slices.SortFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) })
	return Hosts{Names: slices.Compact(names), Addrs: slices.Compact(addrs)}
}

func (h Hosts) equal(o Hosts) bool {
	return slices.Equal(h.Names, o.Names) && slices.Equal(h.Addrs, o.Addrs)
}

// Open loads the identity from cfg.Dir, making the CA and the server key
// on first start. A file that exists but cannot be used is moved aside
// (name.corrupt) and replaced; the returned error then tells so for the log,
// next to a working Identity. A nil Identity means the directory is unusable.
func Open(cfg Config) (*Identity, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.NewSystem()
	}
	if cfg.Validity <= 0 {
		cfg.Validity = DefaultValidity
	}
	if cfg.RenewBefore <= 0 || cfg.RenewBefore >= cfg.Validity {
		cfg.RenewBefore = min(DefaultRenewBefore, cfg.Validity/3)
	}
	if cfg.Name == "" {
		cfg.Name = "storybox"
	}
	if err := state.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	id := &Identity{cfg: cfg}
	var warn []error
	if err := id.loadCA(); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warn = append(warn, err, moveAside(id.path(CAFile)), moveAside(id.path(CAKeyFile)))
		}
		if err := id.makeCA(); err != nil {
			return nil, err
		}
		// A new CA makes the old server certificate worthless.
		_ = state.Remove(id.path(LeafFile))
	}
	key, err := readKey(id.path(LeafKeyFile))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warn = append(warn, err, moveAside(id.path(LeafKeyFile)))
		}
		if key, err = newKey(); err != nil {
			return nil, err
		}
		if err := writeKey(id.path(LeafKeyFile), key); err != nil {
			return nil, err
		}
		_ = state.Remove(id.path(LeafFile))
	}
	id.key = key
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	id.spki = spkiHex(der)
	id.loadLeaf() // a missing or stale one is issued by Ensure
	return id, errors.Join(warn...)
}

func (id *Identity) path(name string) string { return filepath.Join(id.cfg.Dir, name) }

// Fingerprint is the SHA-256 of the server key's DER SubjectPublicKeyInfo
// in 64 lowercase hex digits: what a client computes from the handshake.
func (id *Identity) Fingerprint() string { return id.spki }

// CAPEM is the CA certificate in PEM, for GET /api/ha/v1/tls/ca.
func (id *Identity) CAPEM() []byte { return bytes.Clone(id.caPEM) }

// CA is the CA certificate, for clients in tests.
func (id *Identity) CA() *x509.Certificate { return id.ca }

// Leaf is the current server certificate, or nil before the first Ensure.
func (id *Identity) Leaf() *x509.Certificate {
	if c := id.leaf.Load(); c != nil {
		return c.Leaf
	}
	return nil
}

// Issued counts the server certificates this Identity made since Open.
func (id *Identity) Issued() int { return int(id.issued.Load()) }

// SPKIFingerprint is the fingerprint of a DER certificate's public key, as
// a client computes it.
func SPKIFingerprint(cert *x509.Certificate) string { return spkiHex(cert.RawSubjectPublicKeyInfo) }

func spkiHex(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// Ensure makes sure the server certificate is valid for hosts and current,
// issuing a new one when it is not, and reports whether it did. The
// certificate's dates are calendar time, read on the wall clock, which
// network time steps (docs/faults.md, "The clock steps"):
//
//   - With a set clock (clock.IsSet) a certificate is renewed when it
//     expires within RenewBefore (also after a step forward of months),
//     when the clock is before its start (it was made while the clock was
//     ahead: clients with a right clock would find it not yet valid), when
//     it was made before the clock was set, and when the box's names or
//     addresses changed. A new one runs from an hour ago for Validity.
//   - Before the clock is set (a Pi boots in 1970 and stays there until
//     network time arrives, which on a home network without internet is
//     never) dates are not judged: the certificate made at a known time
//     stays, and new names or addresses get it again with the same dates.
//     Only a box that never had a set clock gets a certificate dated from
//     the wrong clock, valid from then until the CA ends; the first check
//     after the clock is set replaces it.
func (id *Identity) Ensure(hosts Hosts) (bool, error) {
	hosts = hosts.normal()
	id.mu.Lock()
	defer id.mu.Unlock()
	now := id.cfg.Clock.Now()
	from, until := now.Add(-time.Hour), now.Add(id.cfg.Validity)
	if cur := id.leaf.Load(); cur != nil {
		old := id.hosts.Load()
		same := old != nil && old.equal(hosts)
		if clock.IsSet(now) {
			fresh := !now.Before(cur.Leaf.NotBefore) && now.Before(cur.Leaf.NotAfter.Add(-id.cfg.RenewBefore)) &&
				clock.IsSet(cur.Leaf.NotBefore.Add(time.Hour))
			if fresh && same {
				return false, nil
			}
		} else {
			if same {
				return false, nil
			}
			from, until = cur.Leaf.NotBefore, cur.Leaf.NotAfter
		}
	} else if !clock.IsSet(now) {
		until = caNotAfter
	}
	cert, err := id.issue(hosts, from, until)
	if err != nil {
		return false, err
	}
	pemData := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	// Written for the next start; a failed write costs a new certificate
	// then, nothing more.
	werr := state.WriteFile(id.path(LeafFile), pemData)
	id.leaf.Store(cert)
	id.hosts.Store(&hosts)
	id.issued.Add(1)
	if werr != nil {
		return true, fmt.Errorf("pki: save server certificate: %w", werr)
	}
	return true, nil
}

// Expires is when the current server certificate must be renewed by, for
// the renewal timer. Zero before the first Ensure.
func (id *Identity) Expires() time.Time {
	if c := id.leaf.Load(); c != nil {
		return c.Leaf.NotAfter.Add(-id.cfg.RenewBefore)
	}
	return time.Time{}
}

// TLSConfig is the server side of the home-automation listener: TLS 1.2 or
// newer, forward-secret AEAD suites only, the current certificate on every
// handshake.
func (id *Identity) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Only ECDSA suites can be used with the box's key; TLS 1.3 suites
		// are not configurable and all fine.
		CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := id.leaf.Load(); c != nil {
				return c, nil
			}
			return nil, errors.New("pki: no server certificate yet")
		},
	}
}

func (id *Identity) issue(h Hosts, notBefore, notAfter time.Time) (*tls.Certificate, error) {
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		// A subject keeps strict verifiers (OpenSSL's X509_STRICT, which
		// Python's default context sets) from demanding a critical SAN.
		Subject:     pkix.Name{CommonName: firstName(h)},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    h.Names,
	}
	for _, a := range h.Addrs {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.IP(a.AsSlice()))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, id.ca, &id.key.PublicKey, id.caKey)
	if err != nil {
		return nil, fmt.Errorf("pki: issue server certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	return &tls.Certificate{Certificate: [][]byte{der, id.ca.Raw}, PrivateKey: id.key, Leaf: leaf}, nil
}

func firstName(h Hosts) string {
	if len(h.Names) > 0 {
		return h.Names[0]
	}
	if len(h.Addrs) > 0 {
		return h.Addrs[0].String()
	}
	return "storybox"
}

func (id *Identity) makeCA() error {
	key, err := newKey()
	if err != nil {
		return err
	}
	serial, err := serialNumber()
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: id.cfg.Name + " home-automation CA", Organization: []string{"storybox"}},
		NotBefore:             caNotBefore,
		NotAfter:              caNotAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("pki: make CA: %w", err)
	}
	// The key first: a CA certificate without its key would be useless.
	if err := writeKey(id.path(CAKeyFile), key); err != nil {
		return err
	}
	if err := state.WriteFile(id.path(CAFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})); err != nil {
		return fmt.Errorf("pki: save CA: %w", err)
	}
	return id.loadCA()
}

func (id *Identity) loadCA() error {
	data, err := os.ReadFile(id.path(CAFile))
	if err != nil {
		return fmt.Errorf("pki: CA: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return errors.New("pki: CA: not a PEM certificate")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return fmt.Errorf("pki: CA: %w", err)
	}
	key, err := readKey(id.path(CAKeyFile))
	if err != nil {
		return err
	}
	if !key.PublicKey.Equal(ca.PublicKey) {
		return errors.New("pki: CA key does not match the CA certificate")
	}
	id.ca, id.caKey = ca, key
	id.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	return nil
}

// loadLeaf takes the saved server certificate when the current CA signed
// it for the current key; its hosts are unknown until Ensure compares.
func (id *Identity) loadLeaf() {
	data, err := os.ReadFile(id.path(LeafFile))
	if err != nil {
		return
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil || leaf.CheckSignatureFrom(id.ca) != nil || !id.key.PublicKey.Equal(leaf.PublicKey) {
		return
	}
	id.leaf.Store(&tls.Certificate{Certificate: [][]byte{leaf.Raw, id.ca.Raw}, PrivateKey: id.key, Leaf: leaf})
	h := Hosts{Names: leaf.DNSNames}
	for _, ip := range leaf.IPAddresses {
		if a, ok := netip.AddrFromSlice(ip); ok {
			h.Addrs = append(h.Addrs, a)
		}
	}
	h = h.normal()
	id.hosts.Store(&h)
}

func newKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: key: %w", err)
	}
	return k, nil
}

func writeKey(path string, k *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	// state.WriteFile creates its files with mode 0600.
	if err := state.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})); err != nil {
		return fmt.Errorf("pki: save key: %w", err)
	}
	return nil
}

func readKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", filepath.Base(path), err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("pki: %s: not a PEM private key", filepath.Base(path))
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", filepath.Base(path), err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, fmt.Errorf("pki: %s: not an ECDSA P-256 key", filepath.Base(path))
	}
	return ek, nil
}

// moveAside keeps an unusable file for whoever wants to look at it.
func moveAside(path string) error {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	if err := os.Rename(path, path+".corrupt"); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}

func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("pki: serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil // positive, never zero
}

// Addresses lists the box's own unicast addresses on interfaces that are
// up, loopback included (a client on the box itself checks those), for the
// server certificate. Link-local addresses are left out: they carry a zone a
// certificate cannot name.
func Addresses() ([]netip.Addr, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("pki: interfaces: %w", err)
	}
	var out []netip.Addr
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			pfx, err := netip.ParsePrefix(a.String())
			if err != nil {
				continue
			}
			ip := pfx.Addr().Unmap()
			if ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() {
				continue
			}
			out = append(out, ip)
		}
	}
	return out, nil
}
