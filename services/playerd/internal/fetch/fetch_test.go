package fetch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

func TestCheckURL(t *testing.T) {
	strict, loose := Policy{}, Policy{AllowLoopback: true}
	for _, tc := range []struct {
		url          string
		strict, test bool // allowed by each policy
	}{
		{"http://radio.example/stream.mp3", true, true},
		{"https://radio.example:8443/live", true, true},
		{"http://192.168.1.10:8000/kids", true, true}, // a server on the home network
		{"http://[2001:db8::1]/x", true, true},
		{"file:///etc/passwd", false, false},
		{"ftp://radio.example/x", false, false},
		{"gopher://radio.example/x", false, false},
		{"http:///nohost", false, false},
		{"http://user:secret@radio.example/x", false, false},
		{"http://127.0.0.1:8090/api/status", false, true},
		{"http://localhost:8090/", false, true},
		{"http://[::1]/", false, true},
		{"http://[::ffff:127.0.0.1]/", false, true},
		{"http://169.254.169.254/latest/meta-data", false, true},
		{"http://[fe80::1]/", false, true},
		{"http://0.0.0.0/", false, false},
		{"http://224.0.0.1/", false, false},
		{"http://255.255.255.255/", false, false},
		{"not a url at all", false, false},
		{"http://radio.example/" + strings.Repeat("a", MaxURL), false, false},
	} {
		_, err := strict.CheckURL(tc.url)
		if (err == nil) != tc.strict {
			t.Errorf("strict %q: err %v, want allowed %v", tc.url, err, tc.strict)
		}
		if err != nil && !errors.Is(err, fault.Invalid) {
			t.Errorf("strict %q: %v is not of kind invalid", tc.url, err)
		}
		if _, err := loose.CheckURL(tc.url); (err == nil) != tc.test {
			t.Errorf("test policy %q: err %v, want allowed %v", tc.url, err, tc.test)
		}
	}
}

// A name that resolves to loopback is refused when the connection is made,
// not only a literal address.
func TestClientRefusesLoopbackAfterResolving(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := Policy{}.Client(Options{})
	_, err := Get(context.Background(), c, "http://localhost:"+port+"/", nil)
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	if got := Describe(err); !strings.Contains(got, "not allowed") {
		t.Errorf("Describe = %q", got)
	}
	// The same server is fine for the test policy.
	resp, err := Get(context.Background(), Policy{AllowLoopback: true}.Client(Options{}), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestRedirects(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/loop/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop/x", http.StatusFound)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/meta", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest", http.StatusFound)
	})
	hops := 0
	mux.HandleFunc("/three", func(w http.ResponseWriter, r *http.Request) {
		if hops++; hops <= 3 {
			http.Redirect(w, r, "/three", http.StatusFound)
			return
		}
		io.WriteString(w, "arrived")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := Policy{AllowLoopback: true}.Client(Options{MaxRedirects: 3})
	if _, err := Get(context.Background(), c, srv.URL+"/loop/", nil); err == nil || !strings.Contains(err.Error(), "more than 3 redirects") {
		t.Errorf("endless redirects: %v", err)
	}
	if _, err := Get(context.Background(), c, srv.URL+"/file", nil); err == nil || !strings.Contains(err.Error(), "http:// or https://") {
		t.Errorf("redirect to file: %v", err)
	}
	// The test policy allows link-local; the strict one must not follow.
	strict := Policy{}.Client(Options{})
	if _, err := strict.Get(srv.URL + "/meta"); err == nil {
		t.Error("strict policy reached the test server")
	}
	resp, err := Get(context.Background(), c, srv.URL+"/three", nil)
	if err != nil {
		t.Fatalf("three redirects: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "arrived" {
		t.Errorf("body %q", body)
	}
}

// rawServer answers every connection with handle, on loopback.
func rawServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				// Read the request head first, as a server does.
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				handle(c)
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

func TestShoutcastStatusLine(t *testing.T) {
	base := rawServer(t, func(c net.Conn) {
		io.WriteString(c, "ICY 200 OK\r\nicy-name:Kinderfunk\r\nicy-metaint:8192\r\ncontent-type:audio/mpeg\r\n\r\naudio bytes")
	})
	resp, err := Get(context.Background(), Policy{AllowLoopback: true}.Client(Options{}), base+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Icy-Metaint") != "8192" || string(body) != "audio bytes" {
		t.Errorf("status %d, metaint %q, body %q", resp.StatusCode, resp.Header.Get("Icy-Metaint"), body)
	}
}

func TestEndlessHeadersAreRefused(t *testing.T) {
	base := rawServer(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.0 200 OK\r\n")
		line := "X-Filler: " + strings.Repeat("a", 1000) + "\r\n"
		for range 100 { // 100 KB of headers, beyond the 32 KB allowed
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	})
	_, err := Get(context.Background(), Policy{AllowLoopback: true}.Client(Options{}), base+"/", nil)
	if err == nil {
		t.Fatal("endless headers accepted")
	}
}

func TestStalledServerTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	base := rawServer(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Type: audio/mpeg\r\n\r\nsome")
		<-release // then nothing more
	})
	c := Policy{AllowLoopback: true}.Client(Options{ReadTimeout: 200 * time.Millisecond})
	resp, err := Get(context.Background(), c, base+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read from a stalled server: %v, want a timeout", err)
	}
	if got := Describe(err); got != "the server did not answer in time" {
		t.Errorf("Describe = %q", got)
	}
}

func TestReadAllLimit(t *testing.T) {
	if _, err := ReadAll(strings.NewReader(strings.Repeat("x", 2048)), 1024); !errors.Is(err, fault.TooLarge) {
		t.Errorf("err = %v", err)
	}
	if b, err := ReadAll(strings.NewReader("abc"), 3); err != nil || string(b) != "abc" {
		t.Errorf("%q %v", b, err)
	}
}

// The box's own addresses, on any interface, are refused like loopback,
// even where loopback is allowed; the list is asked anew on every check, so
// an address the box gets later is refused from then on; a list that
// cannot be had refuses everything but loopback.
func TestCheckURLRefusesOwnAddresses(t *testing.T) {
	own := []netip.Addr{netip.MustParseAddr("192.168.1.50"), netip.MustParseAddr("fd00::5")}
	var listErr error
	lister := func() ([]netip.Addr, error) { return own, listErr }
	for _, p := range []Policy{{OwnAddrs: lister}, {OwnAddrs: lister, AllowLoopback: true}} {
		for _, u := range []string{"http://192.168.1.50:8090/api/admin/backup", "http://[fd00::5]/", "http://[::ffff:192.168.1.50]/"} {
			if _, err := p.CheckURL(u); !errors.Is(err, ErrForbidden) || !errors.Is(err, fault.Invalid) {
				t.Errorf("%+v %q: %v, want ErrForbidden", p.AllowLoopback, u, err)
			}
		}
		if _, err := p.CheckURL("http://192.168.1.51/"); err != nil {
			t.Errorf("a neighbour refused: %v", err)
		}
	}
	p := Policy{OwnAddrs: lister}
	own = append(own, netip.MustParseAddr("192.168.1.51")) // DHCP gave the box another
	if _, err := p.CheckURL("http://192.168.1.51/"); !errors.Is(err, ErrForbidden) {
		t.Errorf("an address the box got later: %v, want ErrForbidden", err)
	}
	listErr = errors.New("netlink: no")
	if _, err := p.CheckURL("http://192.168.1.99/"); !errors.Is(err, ErrForbidden) {
		t.Errorf("without the list: %v, want ErrForbidden", err)
	}
	if _, err := (Policy{OwnAddrs: lister, AllowLoopback: true}).CheckURL("http://127.0.0.1/"); err != nil {
		t.Errorf("loopback in tests without the list: %v", err)
	}
}

// The box's host name, bare or in .local, is the box itself.
func TestCheckURLRefusesOwnName(t *testing.T) {
	name, err := os.Hostname()
	if err != nil || name == "" {
		t.Skip("no host name")
	}
	for _, u := range []string{"http://" + name + ":8090/", "http://" + strings.ToUpper(name) + ".local/x"} {
		if _, err := (Policy{AllowLoopback: true}).CheckURL(u); !errors.Is(err, ErrForbidden) {
			t.Errorf("%q: %v, want ErrForbidden", u, err)
		}
	}
}

// ownNonLoopback is the machine's real addresses that are neither loopback
// nor link-local, the ones a parent could type as the box's LAN address.
func ownNonLoopback(t *testing.T) []netip.Addr {
	t.Helper()
	all, err := InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Addr
	for _, a := range all {
		if !a.IsLoopback() && !a.IsLinkLocalUnicast() {
			out = append(out, a)
		}
	}
	return out
}

// With the kernel's own list: a server on this machine's real LAN address
// is refused when the URL is checked and, for a URL that got past (a name
// that resolved to it, a redirect), when the connection is made; the same
// server is reached by a client that does not know the address as its own.
func TestClientRefusesOwnAddressOnConnect(t *testing.T) {
	addrs := ownNonLoopback(t)
	if len(addrs) == 0 {
		t.Skip("this machine has no non-loopback address")
	}
	for _, ip := range addrs {
		ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "backup") }))
		srv.Listener = ln
		srv.Start()
		u := "http://" + ln.Addr().String() + "/api/admin/backup"
		if _, err := (Policy{}).CheckURL(u); !errors.Is(err, ErrForbidden) {
			t.Errorf("%s: CheckURL %v, want ErrForbidden", u, err)
		}
		if _, err := Get(context.Background(), Policy{AllowLoopback: true}.Client(Options{}), u, nil); !errors.Is(err, ErrForbidden) {
			t.Errorf("%s: connection %v, want ErrForbidden", u, err)
		}
		notOwn := Policy{OwnAddrs: func() ([]netip.Addr, error) { return nil, nil }}
		resp, err := Get(context.Background(), notOwn.Client(Options{}), u, nil)
		if err != nil {
			t.Fatalf("%s without the rule: %v", u, err)
		}
		resp.Body.Close()
		srv.Close()
	}
}
