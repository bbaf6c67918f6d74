package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/display/displaytest"
)

// The integration's newest legacy client (splitti/MuPiBox-homeassistant)
// adds a camera entity, a still picture of the box's screen, and a
// "Restart UI" button, both on the admin area. Read from its public API
// client, camera and button modules, an admin call is:
//
//  1. GET /api/admin/auth (with its session cookie, if it has one), which
//     must answer 200 with JSON; when it says protected and not
//     authenticated, POST /api/admin/login {"password": …} with the
//     password from its config entry, which must answer 200 and set the
//     session cookie (none configured: the call fails, and the camera
//     shows as unavailable while the box is protected);
//  2. the call with the cookie: the camera GETs /api/admin/screenshot and
//     takes the body as the picture; the button POSTs
//     /api/admin/ui/restart with the JSON body {} and wants a JSON object;
//  3. on 401 it forgets the cookie, logs in again and repeats the call
//     once; anything but 2xx then fails the call.
type haAdmin struct {
	c        *caller
	password string // the config entry's; "" when none is stored
	cookie   string
}

var errHAAuth = errors.New("the integration's authentication error")

func (a *haAdmin) request(method, path string, body []byte) (int, http.Header, []byte, error) {
	h := []string{"User-Agent", haAgent, "Accept", "*/*", "Cookie", a.cookie}
	if body != nil {
		h = append(h, "Content-Type", "application/json")
	}
	resp, data, err := exchange(a.c.hc, method, a.c.base+path, body, h...)
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, data, nil
}

func (a *haAdmin) ensureSession() error {
	code, _, body, err := a.request("GET", "/api/admin/auth", nil)
	if err != nil {
		return err
	}
	var st struct{ Protected, Authenticated bool }
	if code != 200 || json.Unmarshal(body, &st) != nil {
		return fmt.Errorf("admin/auth: %d %s", code, body)
	}
	if !st.Protected || st.Authenticated && a.cookie != "" {
		return nil
	}
	if a.password == "" {
		return fmt.Errorf("%w: protected, no password configured", errHAAuth)
	}
	pw, _ := json.Marshal(map[string]string{"password": a.password})
	code, h, body, err := a.request("POST", "/api/admin/login", pw)
	if err != nil {
		return err
	}
	if code != 200 {
		return fmt.Errorf("%w: login %d %s", errHAAuth, code, body)
	}
	a.cookie = reply{hdr: h}.session()
	if a.cookie == "" {
		return fmt.Errorf("%w: login set no session cookie", errHAAuth)
	}
	return nil
}

// call is the integration's admin call with its one retry after a 401.
func (a *haAdmin) call(method, path string, body []byte) (int, http.Header, []byte, error) {
	if err := a.ensureSession(); err != nil {
		return 0, nil, nil, err
	}
	code, h, data, err := a.request(method, path, body)
	if err == nil && code == 401 {
		a.cookie = ""
		if err := a.ensureSession(); err != nil {
			return 0, nil, nil, err
		}
		code, h, data, err = a.request(method, path, body)
	}
	if err == nil && (code == 401 || code == 403) {
		err = fmt.Errorf("%w: %d %s", errHAAuth, code, data)
	} else if err == nil && code/100 != 2 {
		err = fmt.Errorf("%s %s: %d %s", method, path, code, data)
	}
	return code, h, data, err
}

// camera is the camera entity's picture.
func (a *haAdmin) camera() (image.Image, error) {
	_, _, body, err := a.call("GET", "/api/admin/screenshot", nil)
	if err != nil {
		return nil, err
	}
	return png.Decode(bytes.NewReader(body))
}

// restartUI is a press of the "Restart UI" button.
func (a *haAdmin) restartUI() (map[string]any, error) {
	_, h, body, err := a.call("POST", "/api/admin/ui/restart", []byte("{}"))
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if ct := h.Get("Content-Type"); ct != "application/json" || json.Unmarshal(body, &v) != nil {
		return nil, fmt.Errorf("not a JSON object: %q %s", ct, body)
	}
	return v, nil
}

// restartScreen is the framebuffer as the test sees it: it counts closes
// and the frames shown since the last one.
type restartScreen struct {
	*displaytest.Screen
	mu          sync.Mutex
	closes      int
	sinceClosed int
}

func (s *restartScreen) Show(f *image.RGBA) error {
	s.mu.Lock()
	s.sinceClosed++
	s.mu.Unlock()
	return s.Screen.Show(f)
}

func (s *restartScreen) Close() error {
	s.mu.Lock()
	s.closes++
	s.sinceClosed = 0
	s.mu.Unlock()
	return s.Screen.Close()
}

func (s *restartScreen) state() (closes, sinceClosed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closes, s.sinceClosed
}

// e2eTouch is a touch panel the test taps.
type e2eTouch struct {
	taps   chan image.Point
	closed chan struct{}
	once   sync.Once
}

func (c *e2eTouch) NextTap() (image.Point, error) {
	select {
	case p := <-c.taps:
		return p, nil
	case <-c.closed:
		return image.Point{}, errors.New("touch panel closed")
	}
}

func (c *e2eTouch) Close() error { c.once.Do(func() { close(c.closed) }); return nil }

// TestHomeAssistantCameraAndRestartUI replays the camera and the button
// against a box without a password, then with one, with and without the
// password in the client's configuration; and checks that the restart
// re-opens the screen and the touch panel: the screen draws again and a
// tap on the new panel acts.
func TestHomeAssistantCameraAndRestartUI(t *testing.T) {
	scr := &restartScreen{Screen: displaytest.NewScreen()}
	var mu sync.Mutex
	var panels []*e2eTouch
	panel := func(i int) *e2eTouch {
		mu.Lock()
		defer mu.Unlock()
		if i >= len(panels) {
			return nil
		}
		return panels[i]
	}
	base, _ := startBoxWith(t, mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {2}}), t.TempDir(), func(c *setup) {
		c.screen = scr
		c.touch = func() display.TouchSource {
			p := &e2eTouch{taps: make(chan image.Point), closed: make(chan struct{})}
			mu.Lock()
			panels = append(panels, p)
			mu.Unlock()
			return p
		}
	})
	_, remote := callers(t, base)

	// No password on the box: the client calls without logging in.
	open := &haAdmin{c: remote}
	img, err := open.camera()
	if err != nil {
		t.Fatalf("camera on a box without a password: %v", err)
	}
	if img.Bounds().Size() != image.Pt(800, 480) {
		t.Errorf("camera picture %v", img.Bounds())
	}
	// It is the display's own screenshot, blanking and all: the same
	// frame, pixel for pixel.
	waitUntil(t, "the admin screenshot to equal the display's", 10*time.Second, func() bool {
		code, _, body, err := haGet(base, "/api/display/screenshot")
		if err != nil || code != 200 {
			return false
		}
		own, err := png.Decode(bytes.NewReader(body))
		if err != nil {
			return false
		}
		cam, err := open.camera()
		return err == nil && samePixels(own, cam)
	})

	// The parent sets a password: the camera and the button need a session.
	const pw = "correct horse battery"
	remote.do("PUT", "/api/admin/password", `{"new_password":"`+pw+`"}`).want(t, "first password", 200, "")
	none := &haAdmin{c: remote}
	if _, err := none.camera(); !errors.Is(err, errHAAuth) {
		t.Errorf("camera without a configured password: %v, want the integration's authentication error", err)
	}
	if _, err := none.restartUI(); !errors.Is(err, errHAAuth) {
		t.Errorf("restart without a configured password: %v", err)
	}
	for _, path := range []string{"/api/admin/screenshot", "/api/admin/ui/restart"} {
		method, body := "GET", []byte(nil)
		if path == "/api/admin/ui/restart" {
			method, body = "POST", []byte("{}")
		}
		if code, _, data, err := (&haAdmin{c: remote}).request(method, path, body); err != nil || code != 401 {
			t.Errorf("%s %s without a session: %d %s %v", method, path, code, data, err)
		}
	}
	if _, c := scr.state(); c == 0 {
		t.Fatal("no frame drawn")
	}
	if closes, _ := scr.state(); closes != 0 || panel(1) != nil {
		t.Fatalf("the refused restart restarted the screen (%d closes)", closes)
	}

	ha := &haAdmin{c: remote, password: pw}
	if _, err := ha.camera(); err != nil {
		t.Fatalf("camera with the password: %v", err)
	}
	if ha.cookie == "" {
		t.Fatal("the client did not log in")
	}
	// A session that ended (the box restarted): one more login, no error.
	ha.cookie = "stale"
	if _, err := ha.camera(); err != nil {
		t.Fatalf("camera after the session ended: %v", err)
	}

	// The button: 202 and the generation, as the real box answers; the
	// screen is closed and opened again and draws its frame anew, the
	// old touch panel is closed and the new one is read.
	for gen := 1; gen <= 2; gen++ {
		got, err := ha.restartUI()
		if err != nil {
			t.Fatalf("restart %d: %v", gen, err)
		}
		if got["restart_generation"] != float64(gen) {
			t.Fatalf("restart %d answered %v", gen, got)
		}
		waitUntil(t, fmt.Sprintf("restart %d: the screen reopened and drawn", gen), 10*time.Second, func() bool {
			closes, since := scr.state()
			return closes == gen && since > 0 && panel(gen) != nil
		})
		select {
		case <-panel(gen - 1).closed:
		default:
			t.Fatalf("restart %d: the old touch panel is still open", gen)
		}
		local := client(t, base)
		local.ok("POST", "/api/message", `{"message":"Zeit zum Schlafen"}`)
		local.ok("GET", "/api/display/screenshot", "") // the frame with the message is drawn
		select {
		case panel(gen).taps <- image.Pt(400, 240): // any tap closes a message
		case <-time.After(10 * time.Second):
			t.Fatalf("restart %d: nobody reads the new touch panel", gen)
		}
		waitUntil(t, "the tap to close the message", 10*time.Second, func() bool {
			return strings.TrimSpace(local.do("GET", "/api/message", "").raw) == "null"
		})
	}
}

func samePixels(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}
