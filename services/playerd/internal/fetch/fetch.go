// Package fetch is how the box reaches the internet on a parent's behalf:
// radio streams, playlists, podcast feeds and their covers, and a speech
// server. The URLs come from the admin page, a browser on the home network,
// so a request must not be turned against the box itself (server-side
// request forgery): only http and https, never a loopback, link-local or
// otherwise special address, nor any address of any of the box's own
// interfaces (asked of the kernel at every check, so an address that DHCP
// or a new Wi-Fi network gives the box is covered at once), checked when a
// URL is saved and again on every connection after DNS, redirects bounded
// and checked the same way, headers bounded, every read with a deadline.
package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Policy says which hosts the box may fetch from.
type Policy struct {
	// AllowLoopback also permits loopback and link-local targets. Only
	// tests set it: their servers listen on 127.0.0.1. The box's other
	// addresses stay refused.
	AllowLoopback bool
	// OwnAddrs lists the addresses of the box's interfaces; nil: the
	// kernel's list of every interface's addresses (InterfaceAddrs).
	OwnAddrs func() ([]netip.Addr, error)
	// saved: the box's own addresses are not looked at (Saved).
	saved bool
}

// Saved is the policy for URLs saved earlier (a configuration read back, a
// backup restored): the same, except for the box's own addresses, which
// change (DHCP, another network) and so cannot make what a parent saved
// unreadable. Connections check them all the same.
func (p Policy) Saved() Policy {
	p.saved = true
	return p
}

// MaxURL bounds a URL a parent may save.
const MaxURL = 2048

// ErrForbidden reports a URL or an address the box will not fetch from.
var ErrForbidden = fault.New(fault.Invalid, "address not allowed").Coded("address_not_allowed")

// CheckURL parses raw and checks what can be checked without the network:
// http or https, a host, no credentials, and a literal address or a name
// of the box's own that is allowed. Names are checked again when they
// resolve (Client).
func (p Policy) CheckURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURL {
		return nil, fault.New(fault.Invalid, "URL is longer than %d characters", MaxURL)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fault.New(fault.Invalid, "not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fault.New(fault.Invalid, "URL must start with http:// or https://")
	}
	if u.Hostname() == "" {
		return nil, fault.New(fault.Invalid, "URL has no host")
	}
	if u.User != nil {
		return nil, fault.New(fault.Invalid, "URLs with a user name or password are not supported")
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if err := p.check(ip); err != nil {
			return nil, err
		}
	} else if p.ownName(u.Hostname()) {
		return nil, fmt.Errorf("%w: %s is the box itself", ErrForbidden, u.Hostname())
	}
	u.Fragment = ""
	return u, nil
}

// ownName reports whether host names the box: localhost (unless loopback
// is allowed), or the box's host name, bare or in .local.
func (p Policy) ownName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return !p.AllowLoopback
	}
	name, err := os.Hostname()
	if err != nil || name == "" {
		return false
	}
	name = strings.ToLower(name)
	return h == name || h == name+".local"
}

// check tells whether the box may connect to ip. Private home-network
// addresses are fine (a radio server on the NAS); the box's own addresses,
// loopback, link-local (router and cloud metadata services), multicast and
// unspecified addresses are not.
func (p Policy) check(ip netip.Addr) error {
	ip = ip.Unmap().WithZone("")
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		ip.IsLinkLocalMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) ||
		ip.Is4() && ip.As4()[0] == 0 { // "this network"
		return fmt.Errorf("%w: %s is a special address", ErrForbidden, ip)
	}
	if ip.IsLoopback() || ip.IsLinkLocalUnicast() {
		if p.AllowLoopback {
			return nil
		}
		return fmt.Errorf("%w: %s is the box itself or link-local", ErrForbidden, ip)
	}
	if p.saved {
		return nil
	}
	own, err := p.ownAddrs()
	if err != nil {
		// Unknown is refused: the box cannot tell it is not itself.
		return fmt.Errorf("%w: the box's own addresses could not be listed: %v", ErrForbidden, err)
	}
	if slices.Contains(own, ip) {
		return fmt.Errorf("%w: %s is the box itself", ErrForbidden, ip)
	}
	return nil
}

func (p Policy) ownAddrs() ([]netip.Addr, error) {
	if p.OwnAddrs != nil {
		return p.OwnAddrs()
	}
	return InterfaceAddrs()
}

// InterfaceAddrs asks the kernel for the addresses of every interface of
// the box, now.
func InterfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		var ip net.IP
		switch a := a.(type) {
		case *net.IPNet:
			ip = a.IP
		case *net.IPAddr:
			ip = a.IP
		}
		if na, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, na.Unmap())
		}
	}
	return out, nil
}

// Options are the bounds of one client.
type Options struct {
	// ReadTimeout bounds every read from the network: a server that
	// stalls longer fails the request. Zero means 15 s.
	ReadTimeout time.Duration
	// MaxRedirects bounds the redirects followed. Zero means 5.
	MaxRedirects int
}

const (
	dialTimeout    = 10 * time.Second
	headerTimeout  = 15 * time.Second
	maxHeaderBytes = 32 << 10
)

// UserAgent names the box to servers; some stations refuse clients without
// one.
const UserAgent = "storybox/1 (children's audio player)"

// Client returns an HTTP client that enforces the policy on every connection
// it opens, including those of redirects.
func (p Policy) Client(o Options) *http.Client {
	p.saved = false
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 15 * time.Second
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 5
	}
	d := &net.Dialer{
		Timeout: dialTimeout,
		// After DNS, before connecting, every time: a name that resolves
		// to the box itself is refused like the literal address.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %q is not an address", ErrForbidden, address)
			}
			return p.check(ap.Addr())
		},
	}
	t := &http.Transport{
		Proxy: nil, // a proxy from the environment would bypass the address check
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &conn{Conn: c, timeout: o.ReadTimeout}, nil
		},
		TLSHandshakeTimeout:    dialTimeout,
		ResponseHeaderTimeout:  headerTimeout,
		MaxResponseHeaderBytes: maxHeaderBytes,
		MaxIdleConns:           4,
		IdleConnTimeout:        30 * time.Second,
	}
	return &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > o.MaxRedirects {
				return fault.New(fault.Unsupported, "more than %d redirects", o.MaxRedirects)
			}
			if _, err := p.CheckURL(req.URL.String()); err != nil {
				return fmt.Errorf("redirect: %w", err)
			}
			return nil
		},
	}
}

// Get requests u with the box's User-Agent and the given extra headers.
func Get(ctx context.Context, c *http.Client, u string, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fault.New(fault.Invalid, "not a URL")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", UserAgent)
	return c.Do(req)
}

// ReadAll reads r to its end, refusing more than limit bytes.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fault.New(fault.TooLarge, "larger than %d KB", limit>>10)
	}
	return data, nil
}

// Describe turns a network error into a short message for the status and
// the admin page: what went wrong, without addresses or internals.
func Describe(err error) string {
	var ne net.Error
	var fe *fault.Error
	switch {
	case errors.Is(err, ErrForbidden):
		return "the address is not allowed: it is the box itself, or a link-local or special address"
	case errors.As(err, &fe):
		return fe.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "the server did not answer in time"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the server closed the connection"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "the server's name could not be resolved"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "the server could not be reached"
	}
	return "network error"
}

// conn gives every read a deadline and reads SHOUTcast's "ICY 200 OK"
// status line as HTTP/1.0, which Go's HTTP client otherwise refuses.
type conn struct {
	net.Conn
	timeout time.Duration
	checked bool
	pending []byte
}

func (c *conn) Read(p []byte) (int, error) {
	if err := c.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	if !c.checked {
		c.checked = true
		head := make([]byte, 4)
		n, err := io.ReadFull(c.Conn, head)
		head = head[:n]
		if bytes.Equal(head, []byte("ICY ")) {
			head = []byte("HTTP/1.0 ")
		}
		c.pending = head
		if n < 4 && len(c.pending) == 0 {
			return 0, err
		}
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
