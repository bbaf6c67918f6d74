package hav1

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Listener serves TLS on ln with cfg, and answers a client that speaks
// plain HTTP to it with the contract's JSON error instead of a TLS alert,
// so a misconfigured client learns what is wrong. Wrap ln with connection
// limits before passing it.
func Listener(ln net.Listener, cfg *tls.Config) net.Listener {
	return &tlsListener{Listener: ln, cfg: cfg}
}

type tlsListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	// No I/O here: the first read happens in the connection's own
	// goroutine, in the TLS handshake.
	return tls.Server(&sniffConn{Conn: c, r: bufio.NewReaderSize(c, 512)}, l.cfg), nil
}

// sniffConn looks at the first byte: a TLS record starts with 0x16
// (handshake); an HTTP request with a letter.
type sniffConn struct {
	net.Conn
	r    *bufio.Reader
	once sync.Once
	err  error
}

// NetConn lets a connection limiter below find its own connection.
func (c *sniffConn) NetConn() net.Conn { return c.Conn }

func (c *sniffConn) Read(p []byte) (int, error) {
	c.once.Do(func() {
		_ = c.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := c.r.Peek(1)
		if err != nil {
			c.err = err
			return
		}
		if b[0] >= 'A' && b[0] <= 'Z' {
			s := newSurface(nil)
			status, body := s.Render(errPlainHTTP)
			_ = c.Conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c.Conn, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
				status, http.StatusText(status), len(body), body)
			c.err = errPlainHTTPConn
		}
	})
	if c.err != nil {
		return 0, c.err
	}
	return c.r.Read(p)
}

var errPlainHTTPConn = errors.New("plain HTTP on the TLS port")
