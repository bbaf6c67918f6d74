package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/clock"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
)

func newClock(t time.Time) *clocktest.Clock { return clocktest.New(t) }

var boxHosts = Hosts{Names: []string{"box", "box.local"}, Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("127.0.0.1")}}

func open(t *testing.T, dir string, c *clocktest.Clock) *Identity {
	t.Helper()
	id, err := Open(Config{Dir: dir, Clock: c})
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
	_, err := id.Leaf().Verify(x509.VerifyOptions{Roots: pool, DNSName: host, CurrentTime: id.cfg.Clock.Now(),
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
	c.Advance(DefaultValidity - DefaultRenewBefore - time.Hour)
	if issued, _ := id.Ensure(moved); issued {
		t.Error("renewed too early")
	}
	c.Advance(2 * time.Hour)
	if issued, _ := id.Ensure(moved); !issued {
		t.Error("not renewed inside the renewal margin")
	}
	if err := verify(t, id, "box"); err != nil {
		t.Error(err)
	}
	if id.Fingerprint() != fp || SPKIFingerprint(id.Leaf()) != fp || id.Leaf().SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Error("renewal changed the key or kept the certificate")
	}
}

// Network time steps the wall clock by months in either direction. A step
// forward into the renewal margin renews, once; a step back within the
// certificate's life changes nothing; a step back before its start (it was
// made while the clock ran ahead) renews, so clients with a right clock do
// not see a certificate that is not yet valid.
func TestCertificateAcrossClockSteps(t *testing.T) {
	day := 24 * time.Hour
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := newClock(start)
	id := open(t, t.TempDir(), c)
	if _, err := id.Ensure(boxHosts); err != nil {
		t.Fatal(err)
	}
	first := id.Leaf()
	c.Step(DefaultValidity - DefaultRenewBefore - day) // near renewal, not in it
	if issued, _ := id.Ensure(boxHosts); issued {
		t.Fatal("renewed a day before the renewal margin")
	}
	c.Step(-30 * day) // back, still after the start
	if issued, _ := id.Ensure(boxHosts); issued {
		t.Fatal("renewed after a step back within the certificate's life")
	}
	c.Step(31*day + time.Minute) // into the margin
	if issued, _ := id.Ensure(boxHosts); !issued {
		t.Fatal("not renewed after a step forward into the renewal margin")
	}
	if issued, _ := id.Ensure(boxHosts); issued {
		t.Fatal("renewed twice")
	}
	second := id.Leaf()
	if !second.NotBefore.Equal(c.Now().Add(-time.Hour)) || !second.NotAfter.Equal(c.Now().Add(DefaultValidity)) {
		t.Errorf("renewed for %v..%v at %v", second.NotBefore, second.NotAfter, c.Now())
	}
	// A year too far (a wrong time server), then corrected.
	c.Step(365 * day)
	if issued, _ := id.Ensure(boxHosts); !issued {
		t.Fatal("not renewed after the certificate expired")
	}
	c.Set(start.Add(2 * day))
	if issued, _ := id.Ensure(boxHosts); !issued {
		t.Fatal("a certificate that starts in the future was kept")
	}
	if err := verify(t, id, "box"); err != nil {
		t.Errorf("after the correction: %v", err)
	}
	if issued, _ := id.Ensure(boxHosts); issued {
		t.Fatal("renewed again without a change")
	}
	if id.Leaf().NotBefore.After(c.Now()) || id.Leaf().SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Errorf("certificate %v..%v at %v", id.Leaf().NotBefore, id.Leaf().NotAfter, c.Now())
	}
}

// Before network time sets the clock (a Pi boots in 1970) the box cannot
// tell a current certificate from an old one, and one dated now would be
// decades expired for every client: the certificate made at a known time
// stays, also across a restart, and a new address gets it with the same
// dates. Once the clock is set it is judged as usual.
func TestCertificateBeforeTheClockIsSet(t *testing.T) {
	dir := t.TempDir()
	set := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := newClock(set)
	id := open(t, dir, c)
	if _, err := id.Ensure(boxHosts); err != nil {
		t.Fatal(err)
	}
	made := id.Leaf()

	boot := newClock(time.Date(1970, 1, 1, 0, 0, 12, 0, time.UTC))
	id = open(t, dir, boot)
	if issued, err := id.Ensure(boxHosts); issued || err != nil {
		t.Fatalf("a 1970 clock replaced the certificate: %v %v", issued, err)
	}
	moved := Hosts{Names: boxHosts.Names, Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.77")}}
	if issued, _ := id.Ensure(moved); !issued {
		t.Fatal("no certificate for a new address")
	}
	if l := id.Leaf(); !l.NotBefore.Equal(made.NotBefore) || !l.NotAfter.Equal(made.NotAfter) {
		t.Errorf("new address before the clock is set: %v..%v, want the dates of %v..%v", l.NotBefore, l.NotAfter, made.NotBefore, made.NotAfter)
	}
	boot.Set(set.Add(24 * time.Hour)) // network time
	if issued, _ := id.Ensure(moved); issued {
		t.Error("a current certificate renewed when the clock was set")
	}

	// A box that never had a set clock: a certificate from the wrong
	// clock that clients accept until the clock is set, then a real one.
	never := newClock(time.Date(1970, 1, 1, 0, 0, 12, 0, time.UTC))
	fresh := open(t, t.TempDir(), never)
	if issued, _ := fresh.Ensure(boxHosts); !issued {
		t.Fatal("no certificate at all")
	}
	if l := fresh.Leaf(); l.NotBefore.After(never.Now()) || l.NotAfter.Before(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("certificate of an unset clock: %v..%v", l.NotBefore, l.NotAfter)
	}
	if issued, _ := fresh.Ensure(boxHosts); issued {
		t.Error("renewed while the clock is still not set")
	}
	never.Set(clock.Floor.Add(400 * 24 * time.Hour))
	if issued, _ := fresh.Ensure(boxHosts); !issued {
		t.Fatal("the certificate of the unset clock was kept once the clock was set")
	}
	if err := verify(t, fresh, "box"); err != nil || fresh.Leaf().NotAfter.After(never.Now().Add(DefaultValidity)) {
		t.Errorf("after the clock was set: %v, until %v", err, fresh.Leaf().NotAfter)
	}
}

func TestUnusableFilesAreMovedAsideAndReplaced(t *testing.T) {
	dir := t.TempDir()
	c := newClock(time.Now())
	first := open(t, dir, c)
	if err := os.WriteFile(filepath.Join(dir, CAKeyFile), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := Open(Config{Dir: dir, Clock: c})
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
		if _, err := id.issue(boxHosts.normal(), time.Now(), time.Now().Add(DefaultValidity)); err != nil {
			b.Fatal(err)
		}
	}
}
