package fetch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
