// Package soakctl is what the soak build of playerd (go build -tags
// soaktest; services/playerd/cmd/soak runs it) puts in place of two parts of
// the machine this machine lacks, both reached over a Unix socket the soak
// driver names in STORYBOX_SOAK_CONTROL:
//
//   - a USB card reader (inputtest's /dev/input in memory), so cards are read
//     through the same evdev path, reader rules and card service as on the box;
//   - a screen that keeps the last frame, so the driver reads a pairing code
//     off it as a parent reads the box's screen.
//
// Only the soak build links it; the production binary and the image do not.
package soakctl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/input"
	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
)

// soakReader is where the soak build's card reader is plugged in.
const soakReader = "/dev/input/event-soak-reader"

// Start serves the control socket at path (a predecessor's, left by a kill,
// is replaced) and returns the card reader's devices and the screen to put
// in place of the machine's. A failure to accept ends the serving and is
// logged: the soak driver then reports the box unreachable.
func Start(path string, log *slog.Logger) (input.Devices, display.Screen, error) {
	if path == "" {
		return nil, nil, errors.New("soak build: STORYBOX_SOAK_CONTROL (the driver's control socket) is not set")
	}
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, nil, fmt.Errorf("soak build: control socket: %w", err)
	}
	c := &soakControl{devices: inputtest.New(), screen: &soakScreen{}}
	c.devices.Plug(soakReader, inputtest.Reader)
	go c.serve(ln, log)
	return c.devices, c.screen, nil
}

type soakControl struct {
	devices *inputtest.Devices
	screen  *soakScreen
}

func (c *soakControl) serve(ln net.Listener, log *slog.Logger) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			log.Error("soak control", "error", err)
			return
		}
		go c.session(conn)
	}
}

// session answers one line per request: "card ID" types the id and Enter on
// the reader; "unplug" and "plug" pull it out and put it back; "frame"
// answers "frame W H" and the last frame's RGBA pixels.
func (c *soakControl) session(conn net.Conn) {
	defer conn.Close()
	in := bufio.NewReader(conn)
	out := bufio.NewWriter(conn)
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch cmd {
		case "card":
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err = c.devices.Type(ctx, soakReader, arg, true)
			cancel()
			soakReply(out, err)
		case "unplug":
			c.devices.Unplug(soakReader)
			soakReply(out, nil)
		case "plug":
			c.devices.Plug(soakReader, inputtest.Reader)
			soakReply(out, nil)
		case "frame":
			c.screen.writeTo(out)
		default:
			soakReply(out, fmt.Errorf("unknown request %q", cmd))
		}
		if out.Flush() != nil {
			return
		}
	}
}

func soakReply(w *bufio.Writer, err error) {
	if err != nil {
		fmt.Fprintf(w, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	fmt.Fprintln(w, "ok")
}

// soakScreen is an 800×480 screen that keeps a copy of the last frame in
// one buffer, reused.
type soakScreen struct {
	mu   sync.Mutex
	last *image.RGBA
}

func (s *soakScreen) Size() image.Point { return image.Pt(800, 480) }
func (s *soakScreen) Close() error      { return nil }

func (s *soakScreen) Show(f *image.RGBA) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil || s.last.Rect != f.Rect {
		s.last = image.NewRGBA(f.Rect)
	}
	copy(s.last.Pix, f.Pix)
	return nil
}

func (s *soakScreen) writeTo(w *bufio.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		fmt.Fprintln(w, "frame 0 0")
		return
	}
	b := s.last.Rect
	fmt.Fprintf(w, "frame %d %d\n", b.Dx(), b.Dy())
	_, _ = w.Write(s.last.Pix)
}
