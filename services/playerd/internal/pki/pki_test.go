package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

type clock struct{ t atomic.Int64 }

func newClock(t time.Time) *clock { c := &clock{}; c.t.Store(t.UnixNano()); return c }
func (c *clock) now() time.Time   { return time.Unix(0, c.t.Load()) }
func (c *clock) add(d time.Duration) {
	c.t.Add(int64(d))
}

var boxHosts = Hosts{Names: []string{"box", "box.local"}, Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("127.0.0.1")}}

func open(t *testing.T, dir string, c *clock) *Identity {
	t.Helper()
	id, err := Open(Config{Dir: dir, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func verify(t *testing.T, id *Identity, host string) error {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(id.CAPEM()) {
		t.Fatal("CA PEM does not parse")
	}
	_, err := id.Leaf().Verify(x509.VerifyOptions{Roots: pool, DNSName: host, CurrentTime: id.cfg.Now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}

func TestFirstStartMakesPrivateFilesAndAValidChain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ha")
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	id := open(t, dir, c)
	if issued, err := id.Ensure(boxHosts); err != nil || !issued {
		t.Fatalf("Ensure: %v %v", issued, err)
	}
	for _, f := range []string{CAFile, CAKeyFile, LeafFile, LeafKeyFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, fi.Mode())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
	}
	for _, h := range []string{"box", "box.local", "192.0.2.10", "127.0.0.1"} {
		if err := verify(t, id, h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	if err := verify(t, id, "evil.example"); err == nil {
		t.Error("a name the box does not carry verified")
	}
	if id.CA().PublicKeyAlgorithm != x509.ECDSA || !id.CA().IsCA || !id.CA().MaxPathLenZero {
		t.Error("CA is not an ECDSA CA limited to leaf certificates")
	}
	if got := SPKIFingerprint(id.Leaf()); got != id.Fingerprint() || len(got) != 64 {
		t.Errorf("fingerprint %q, leaf's %q", id.Fingerprint(), got)
	}
}

func TestRestartKeepsIdentityAndCertificate(t *testing.T) {
	dir := t.TempDir()
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a := open(t, dir, c)
	if _, err := a.Ensure(boxHosts); err != nil {
		t.Fatal(err)
	}
	b := open(t, dir, c)
	if issued, err := b.Ensure(boxHosts); err != nil || issued {
		t.Errorf("the saved certificate was not reused: issued=%v err=%v", issued, err)
	}
	if a.Fingerprint() != b.Fingerprint() || string(a.CAPEM()) != string(b.CAPEM()) {
		t.Error("identity changed across a restart")
	}
}

func TestRenewalKeepsTheKey(t *testing.T) {
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	id := open(t, t.TempDir(), c)
	if _, err := id.Ensure(boxHosts); err != nil {
		t.Fatal(err)
	}
	fp, first := id.Fingerprint(), id.Leaf()

	// A new address (DHCP gave another lease).
	moved := Hosts{Names: boxHosts.Names, Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.77")}}
	if issued, _ := id.Ensure(moved); !issued {
		t.Fatal("no new certificate for a new address")
	}
	if err := verify(t, id, "192.0.2.77"); err != nil {
		t.Error(err)
	}
	if err := verify(t, id, "192.0.2.10"); err == nil {
		t.Error("the old address is still in the certificate")
	}
	// The same set in another order is no change.
	if issued, _ := id.Ensure(Hosts{Names: []string{"BOX.local.", "box"}, Addrs: moved.Addrs}); issued {
		t.Error("renewed for the same hosts")
	}
	// Time passes: renewed once inside the renewal margin, not before.
	c.add(DefaultValidity - DefaultRenewBefore - time.Hour)
	if issued, _ := id.Ensure(moved); issued {
		t.Error("renewed too early")
	}
	c.add(2 * time.Hour)
	if issued, _ := id.Ensure(moved); !issued {
		t.Error("not renewed inside the renewal margin")
	}
	if err := verify(t, id, "box"); err != nil {
		t.Error(err)
	}
	if id.Fingerprint() != fp || SPKIFingerprint(id.Leaf()) != fp || id.Leaf().SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Error("renewal changed the key or kept the certificate")
	}
	// The clock was wrong when the certificate was made: a clock before
	// its start renews it too.
	c.add(-5 * 365 * 24 * time.Hour)
	if issued, _ := id.Ensure(moved); !issued {
		t.Error("not renewed for a clock before the certificate's start")
	}
}

func TestUnusableFilesAreMovedAsideAndReplaced(t *testing.T) {
	dir := t.TempDir()
	c := newClock(time.Now())
	first := open(t, dir, c)
	if err := os.WriteFile(filepath.Join(dir, CAKeyFile), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := Open(Config{Dir: dir, Now: c.now})
	if id == nil {
		t.Fatalf("no identity: %v", err)
	}
	if err == nil {
		t.Error("a corrupt CA key was not reported")
	}
	if _, err := os.Stat(filepath.Join(dir, CAKeyFile+".corrupt")); err != nil {
		t.Errorf("the corrupt key was not kept: %v", err)
	}
	if string(id.CAPEM()) == string(first.CAPEM()) {
		t.Error("the CA was kept without its key")
	}
	if _, err := id.Ensure(boxHosts); err != nil {
		t.Fatal(err)
	}
	if err := verify(t, id, "box"); err != nil {
		t.Error(err)
	}
}

func TestTLSRefusesOldVersions(t *testing.T) {
	id := open(t, t.TempDir(), newClock(time.Now()))
	if _, err := id.Ensure(boxHosts); err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", id.TLSConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	pool := x509.NewCertPool()
	pool.AddCert(id.CA())
	dial := func(max uint16) (*tls.Conn, error) {
		d := &net.Dialer{Timeout: 5 * time.Second}
		return tls.DialWithDialer(d, "tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS10, MaxVersion: max})
	}
	if c, err := dial(tls.VersionTLS11); err == nil {
		c.Close()
		t.Error("TLS 1.1 was accepted")
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		c, err := dial(v)
		if err != nil {
			t.Errorf("%s: %v", tls.VersionName(v), err)
			continue
		}
		if got := c.ConnectionState().Version; got != v {
			t.Errorf("negotiated %s, want %s", tls.VersionName(got), tls.VersionName(v))
		}
		c.Close()
	}
}

// BenchmarkHandshake is the cost of one full TLS handshake (no resumption)
// against the box's certificate over loopback, client and server together.
func BenchmarkHandshake(b *testing.B) {
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		b.Run(tls.VersionName(v), func(b *testing.B) {
			id, err := Open(Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := id.Ensure(boxHosts); err != nil {
				b.Fatal(err)
			}
			ln, err := tls.Listen("tcp", "127.0.0.1:0", id.TLSConfig())
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
				}
			}()
			pool := x509.NewCertPool()
			pool.AddCert(id.CA())
			cfg := &tls.Config{RootCAs: pool, ServerName: "box", MinVersion: v, MaxVersion: v}
			b.ResetTimer()
			for b.Loop() {
				c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

func BenchmarkIssue(b *testing.B) {
	id, err := Open(Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := id.issue(boxHosts.normal(), time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
