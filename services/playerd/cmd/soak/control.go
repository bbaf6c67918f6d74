package main

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// control talks to the soak build's socket (services/playerd/internal/soakctl):
// the card reader and the screen that stand in for the machine's.
type control struct {
	path string
	mu   sync.Mutex
	conn net.Conn
	in   *bufio.Reader
}

// ask sends one request and returns the first line of the answer; a
// broken connection (playerd killed) is dialled anew once.
func (c *control) ask(line string) (string, *bufio.Reader, error) {
	for attempt := 0; ; attempt++ {
		if c.conn == nil {
			conn, err := net.DialTimeout("unix", c.path, 2*time.Second)
			if err != nil {
				return "", nil, err
			}
			c.conn, c.in = conn, bufio.NewReaderSize(conn, 1<<16)
		}
		_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, err := fmt.Fprintln(c.conn, line)
		var answer string
		if err == nil {
			answer, err = c.in.ReadString('\n')
		}
		if err == nil {
			return strings.TrimSpace(answer), c.in, nil
		}
		c.conn.Close()
		c.conn = nil
		if attempt > 0 {
			return "", nil, err
		}
	}
}

func (c *control) simple(line string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, _, err := c.ask(line)
	if err != nil {
		return err
	}
	if a != "ok" {
		return errors.New(a)
	}
	return nil
}

// card types a card's id on the reader, as placing the card does.
func (c *control) card(id string) error { return c.simple("card " + id) }

// plug puts the reader in or pulls it out.
func (c *control) plug(in bool) error {
	if in {
		return c.simple("plug")
	}
	return c.simple("unplug")
}

// frame is what the box's screen shows now.
func (c *control) frame() (*image.RGBA, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, in, err := c.ask("frame")
	if err != nil {
		return nil, err
	}
	var w, h int
	if _, err := fmt.Sscanf(a, "frame %d %d", &w, &h); err != nil {
		return nil, fmt.Errorf("frame answer %q", a)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	if _, err := io.ReadFull(in, img.Pix); err != nil {
		c.conn.Close()
		c.conn = nil
		return nil, err
	}
	return img, nil
}

// reset forgets the connection (playerd restarted).
func (c *control) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}
