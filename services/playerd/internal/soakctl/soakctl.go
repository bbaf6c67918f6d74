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
	"time"

	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/display/displaytest"
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
	c := &soakControl{devices: inputtest.New(), screen: displaytest.NewScreen()}
	c.devices.Plug(soakReader, inputtest.Reader)
	go c.serve(ln, log)
	return c.devices, c.screen, nil
}

type soakControl struct {
	devices *inputtest.Devices
	screen  *displaytest.Screen
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
			c.screen.ReadLast(func(f *image.RGBA) { writeFrame(out, f) })
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

func writeFrame(w *bufio.Writer, f *image.RGBA) {
	if f == nil {
		fmt.Fprintln(w, "frame 0 0")
		return
	}
	b := f.Rect
	fmt.Fprintf(w, "frame %d %d\n", b.Dx(), b.Dy())
	_, _ = w.Write(f.Pix)
}
