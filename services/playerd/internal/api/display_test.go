package api

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// screenPlayer is a still player for the screen tests.
type screenPlayer struct {
	mu sync.Mutex
	st player.Status
}

func (p *screenPlayer) Status() player.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}
func (p *screenPlayer) Do(context.Context, player.Command) (player.Status, error) {
	return p.Status(), fault.Conflict
}

func newScreenAPI(t *testing.T) (http.Handler, *display.Display) {
	t.Helper()
	p := &screenPlayer{st: player.Status{State: player.Stopped, Index: -1, Volume: 30, MaxVolume: 50}}
	d, err := display.New(display.Options{Player: p})
	if err != nil {
		t.Fatal(err)
	}
	m, hosts := testAuth(t)
	return NewHandler(Deps{Version: "test", Player: p, Display: d, Auth: m, Hosts: hosts}), d
}

func do(t *testing.T, h http.Handler, method, path, ctype, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "box:8090"
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func shot(t *testing.T, h http.Handler) image.Image {
	t.Helper()
	rec := do(t, h, http.MethodGet, "/api/display/screenshot", "", "")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("screenshot: %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	img, err := png.Decode(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Size() != image.Pt(800, 480) {
		t.Fatalf("screenshot is %v", img.Bounds())
	}
	return img
}

// cardPixels counts, in the middle of the screen where the message card
// sits, light card pixels and dark glyph pixels.
func cardPixels(img image.Image) (light, dark, all int) {
	for y := 120; y < 360; y++ {
		for x := 150; x < 650; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			switch {
			case r>>8 > 0xe0 && g>>8 > 0xe0 && b>>8 > 0xc8:
				light++
			case r>>8 < 0x40 && g>>8 < 0x40 && b>>8 < 0x48:
				dark++
			}
			all++
		}
	}
	return light, dark, all
}

func TestPostMessageShowsInScreenshot(t *testing.T) {
	h, _ := newScreenAPI(t)
	before := shot(t, h)
	if rec := do(t, h, http.MethodGet, "/api/message", "", ""); strings.TrimSpace(rec.Body.String()) != "null" {
		t.Fatalf("GET /api/message without a message = %d %s, want null", rec.Code, rec.Body.String())
	}

	rec := do(t, h, http.MethodPost, "/api/message", "application/json",
		`{"message":"Das Abendessen ist fertig! Hände waschen, bitte.","title":"Küche","duration_ms":12000}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST /api/message: %d %s", rec.Code, rec.Body.String())
	}
	var got struct {
		Success bool            `json:"success"`
		Message display.Message `json:"message"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Success || got.Message.Title != "Küche" || got.Message.DurationMS != 12000 {
		t.Fatalf("response = %s", rec.Body.String())
	}

	rec = do(t, h, http.MethodGet, "/api/message", "", "")
	var active *display.Message
	if err := json.Unmarshal(rec.Body.Bytes(), &active); err != nil || active == nil || active.ID != got.Message.ID {
		t.Fatalf("GET /api/message = %s (%v)", rec.Body.String(), err)
	}
	rec = do(t, h, http.MethodGet, "/api/ui-state", "", "")
	if !strings.Contains(rec.Body.String(), `"message":"Das Abendessen`) {
		t.Errorf("ui-state = %s", rec.Body.String())
	}

	after := shot(t, h)
	// Before: no card. After: a light card with dark text on it.
	if light, _, _ := cardPixels(before); light != 0 {
		t.Fatalf("%d card pixels before the message", light)
	}
	light, dark, all := cardPixels(after)
	if light < all/2 || dark < 1000 || dark > all/3 {
		t.Fatalf("after the message: %d light and %d dark of %d pixels, want a card with text", light, dark, all)
	}
}

func TestPostMessageRejects(t *testing.T) {
	h, d := newScreenAPI(t)
	do(t, h, http.MethodPost, "/api/message", "application/json", `{"message":"erste","duration_ms":20000}`)
	cases := []struct {
		name, ctype, body string
		status            int
		want              string
	}{
		{"no message", "application/json", `{"title":"x"}`, 400, "message is required"},
		{"too long", "application/json", `{"message":"` + strings.Repeat("ö", 1001) + `"}`, 400, "1000"},
		{"long title", "application/json", `{"message":"m","title":"` + strings.Repeat("t", 121) + `"}`, 400, "title"},
		{"duration too long", "application/json", `{"message":"m","duration_ms":30001}`, 400, "duration_ms"},
		{"duration fraction", "application/json", `{"message":"m","duration_ms":1.5}`, 400, "duration_ms"},
		{"duration string", "application/json", `{"message":"m","duration_ms":"5"}`, 400, "duration_ms"},
		{"unknown field", "application/json", `{"message":"m","colour":"red"}`, 400, "colour"},
		{"not JSON", "text/plain", `message=m`, 415, "application/json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, http.MethodPost, "/api/message", tc.ctype, tc.body)
			var e struct{ Error string }
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tc.status || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, tc.want) {
				t.Fatalf("got %d %s, want %d with %q", rec.Code, body, tc.status, tc.want)
			}
			if m := d.ActiveMessage(); m == nil || m.Message != "erste" {
				t.Fatalf("a refused request changed the message: %+v", m)
			}
		})
	}
}

func TestScreenEndpointsWithoutDisplay(t *testing.T) {
	m, hosts := testAuth(t)
	h := NewHandler(Deps{Version: "test", Player: &screenPlayer{}, Auth: m, Hosts: hosts})
	for _, path := range []string{"/api/display/screenshot", "/api/message", "/api/ui-state"} {
		if rec := do(t, h, http.MethodGet, path, "", ""); rec.Code != http.StatusServiceUnavailable ||
			!bytes.Contains(rec.Body.Bytes(), []byte(`"error"`)) {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
	}
}
