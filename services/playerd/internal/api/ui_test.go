package api

import (
	"bytes"
	"context"
	"image"
	"image/draw"
	"image/png"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/display/displaytest"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

type countRestarts struct{ n atomic.Uint64 }

func (c *countRestarts) RestartScreen() uint64 { return c.n.Add(1) }

// POST /api/admin/ui/restart asks the screen's supervision for a restart
// and answers 202 with the request's generation; a bad body asks nothing.
func TestRestartUI(t *testing.T) {
	r := &countRestarts{}
	b := newBox(t, func(d *Deps) { d.UIRestart = r })
	for gen := 1; gen <= 2; gen++ {
		code, body, _ := b.call("POST", "/api/admin/ui/restart", "{}")
		if code != http.StatusAccepted || body["restart_generation"] != float64(gen) {
			t.Fatalf("restart %d: %d %v", gen, code, body)
		}
	}
	for _, c := range []struct {
		body, ctype string
		code        int
	}{{`{"now":true}`, "application/json", 400}, {`[]`, "application/json", 400}, {`{}`, "text/plain", 415}} {
		code, body, _ := b.call("POST", "/api/admin/ui/restart", c.body, "Content-Type", c.ctype)
		if code != c.code || body["error"] == nil {
			t.Errorf("%s %s: %d %v, want %d with an error", c.ctype, c.body, code, body, c.code)
		}
	}
	if n := r.n.Load(); n != 2 {
		t.Errorf("%d restarts asked, want 2", n)
	}
	// Once the admin area has a password, a caller without a session is
	// refused and nothing is asked.
	if code, _ := b.send(lan, "PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`, ""); code != 200 {
		t.Fatal(code)
	}
	if code, _ := b.send(lan, "POST", "/api/admin/ui/restart", "{}", ""); code != 401 || r.n.Load() != 2 {
		t.Errorf("without a session: %d, %d restarts", code, r.n.Load())
	}

	off := newBox(t, nil)
	if code, body, _ := off.call("POST", "/api/admin/ui/restart", "{}"); code != 503 || body["error"] != "display unavailable" {
		t.Errorf("without a screen: %d %v", code, body)
	}
}

type showPairing struct{ p *pairing.Prompt }

func (s showPairing) Prompt() *pairing.Prompt { return s.p }
func (s showPairing) Fingerprint() string     { return "" }
func (s showPairing) Cancel() error           { return nil }

// GET /api/admin/screenshot is the display's screenshot behind the admin
// login: a pairing code on the screen is blanked as on
// /api/display/screenshot.
func TestAdminScreenshot(t *testing.T) {
	const code = "048291"
	p := &screenPlayer{st: player.Status{State: player.Stopped, Index: -1, Volume: 30, MaxVolume: 50}}
	d, err := display.New(display.Options{Player: p, Pairing: showPairing{&pairing.Prompt{Code: code, ClientName: "Home Assistant",
		Requested: []pairing.Scope{pairing.Read}, Granted: []pairing.Scope{pairing.Read}, Left: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	screen, err := d.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := displaytest.ReadCode(screen); got != code {
		t.Fatalf("the screen shows %q, want the code %q: the test shows nothing", got, code)
	}
	b := newBox(t, func(deps *Deps) { deps.Display = d })
	read := func(path, session string) (int, image.Image) {
		t.Helper()
		req := httptest.NewRequest("GET", path, nil)
		req.Host, req.RemoteAddr = "box:8090", lan
		if session != "" {
			req.AddCookie(&http.Cookie{Name: auth.CookieName, Value: session})
		}
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		if rec.Code != 200 {
			return rec.Code, nil
		}
		img, err := png.Decode(bytes.NewReader(rec.Body.Bytes()))
		if err != nil || rec.Header().Get("Content-Type") != "image/png" {
			t.Fatalf("%s: %q %v", path, rec.Header().Get("Content-Type"), err)
		}
		return rec.Code, img
	}
	_, own := read("/api/display/screenshot", "")
	_, admin := read("/api/admin/screenshot", "")
	for name, img := range map[string]image.Image{"display": own, "admin": admin} {
		rgba := image.NewRGBA(img.Bounds())
		draw.Draw(rgba, rgba.Bounds(), img, image.Point{}, draw.Src)
		if got, _ := displaytest.ReadCode(rgba); got != "" {
			t.Errorf("the %s screenshot shows the digits %q", name, got)
		}
	}
	if !bytes.Equal(own.(*image.RGBA).Pix, admin.(*image.RGBA).Pix) {
		t.Error("the admin screenshot differs from the display's")
	}
	// Behind the login once there is a password.
	if code, _ := b.send(lan, "PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`, ""); code != 200 {
		t.Fatal(code)
	}
	if code, _ := read("/api/admin/screenshot", ""); code != 401 {
		t.Errorf("without a session: %d", code)
	}
}
