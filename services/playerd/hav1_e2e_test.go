package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"image"
	"image/draw"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
	"github.com/storybox/storybox/services/playerd/internal/display/displaytest"
)

// readCode waits for a frame with a code on it, and reads the code off it
// as a person would read the screen.
func readCode(t *testing.T, s *displaytest.Screen) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		var code string
		var err error
		s.ReadLast(func(f *image.RGBA) {
			if f != nil {
				code, err = displaytest.ReadCode(f)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(code) == 6 {
			return code
		}
		select {
		case <-s.Shown():
		case <-deadline:
			t.Fatal("no pairing code appeared on the screen")
		}
	}
}

// haBox is a running box with its home-automation API on a second port.
type haBox struct {
	base, v1 string // http://127.0.0.1:port, https://127.0.0.1:port/api/ha/v1
	haAddr   string
	screen   *displaytest.Screen
	clock    *clocktest.Clock
	admin    *http.Client // keeps the administrator's session cookie
	haClient *http.Client // trusts the box's CA once paired (pairHA)
	logs     *logTap
	reboots  chan struct{}
	stop     func()
}

func startHABox(t *testing.T, media, data string, clock *clocktest.Clock, more ...func(*setup)) *haBox {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &haBox{haAddr: ln.Addr().String(), screen: displaytest.NewScreen(), clock: clock, logs: &logTap{}, reboots: make(chan struct{}, 1)}
	b.base, b.stop = startBoxWith(t, media, data, func(c *setup) {
		c.haListener, c.clock, c.screen, c.log = ln, clock, b.screen, b.logs
		c.reboot = func(context.Context) error { b.reboots <- struct{}{}; return nil }
		for _, edit := range more {
			edit(c)
		}
	})
	b.v1 = "https://" + b.haAddr + "/api/ha/v1"
	jar, _ := cookiejar.New(nil)
	b.admin = &http.Client{Jar: jar}
	return b
}

func (b *haBox) adminDo(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	r := (&caller{t: t, base: b.base, hc: b.admin}).do(method, path, body)
	return r.code, r.body
}

type haClient struct {
	id, name string
	scopes   []string
}

// pair is the whole flow for one client: the parent opens the window
// (admin session), the client starts, the parent reads the code off the
// box's screen and types it in.
func (b *haBox) pair(t *testing.T, c *http.Client, cl haClient, allow string) map[string]any {
	t.Helper()
	if st, body := b.adminDo(t, "POST", "/api/admin/ha/pairing", `{"scopes":`+allow+`}`); st != 200 {
		t.Fatalf("open pairing: %d %v", st, body)
	}
	start := v1(t, c, "POST", b.v1+"/pair/start", "", map[string]any{"client_name": cl.name, "client_id": cl.id, "requested_scopes": cl.scopes}).
		want(t, "pair/start", 200, "")
	id, _ := start.body["pairing_id"].(string)
	if id == "" || start.body["expires_in"] != 300.0 || start.body["code_length"] != 6.0 || start.body["confirmation"] != "display_code" {
		t.Fatalf("pair/start answer %s", start.raw)
	}
	code := readCode(t, b.screen)
	return v1(t, c, "POST", b.v1+"/pair/confirm", "", map[string]any{"pairing_id": id, "client_id": cl.id, "code": code[:3] + " " + code[3:]}).
		want(t, "pair/confirm", 200, "").body
}

var (
	homeAssistant = haClient{"8c4c4f52-6e35-44dd-930a-bdb838cd60d8", "Home Assistant", []string{"read", "control", "power"}}
	readOnly      = haClient{"1f0e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", "Dashboard", []string{"read", "control"}}
)

// Done-when of issue 14: a client written from the contract pairs end to
// end over real TLS against a running playerd, reading the code off the
// rendered screen, pins the certificate, and exercises every endpoint and
// scope; the refusals answer with the contract's errors; the code is never
// in a screenshot served over the network, nor in the log.
func TestHomeAutomationV1(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {30, 30}})
	data := t.TempDir()
	clock := testClock(time.Now())
	b := startHABox(t, media, data, clock)
	defer func() { b.stop() }()

	// First contact: the fingerprint the client computes is the one the
	// parent reads in the admin API (and on the screen).
	spki, digest := probe(t, b.haAddr)
	st, adminHA := b.adminDo(t, "GET", "/api/admin/ha", "")
	if st != 200 || adminHA["fingerprint"] != spki {
		t.Fatalf("admin fingerprint %v (%d), client computed %s", adminHA["fingerprint"], st, spki)
	}
	pinned := pinnedClient(digest)
	resp, err := pinned.Get(b.v1 + "/tls/ca")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(caPEM) > 32768 {
		t.Fatalf("tls/ca: %d, %d bytes", resp.StatusCode, len(caPEM))
	}
	if blk, _ := pem.Decode(caPEM); blk == nil || blk.Type != "CERTIFICATE" {
		t.Fatalf("tls/ca is not a PEM certificate: %q", caPEM)
	}
	c := caClient(t, caPEM) // verified chain, host name 127.0.0.1 checked
	if a := v1(t, c, "GET", b.v1+"/health", "", nil).want(t, "health", 200, ""); a.body["ok"] != true || a.body["api_version"] != 1.0 {
		t.Errorf("health %s", a.raw)
	}

	// Pairing needs the parent: without the window, and without a session
	// once a password is set.
	v1(t, c, "POST", b.v1+"/pair/start", "", map[string]any{"client_name": "Home Assistant", "client_id": homeAssistant.id, "requested_scopes": homeAssistant.scopes}).
		want(t, "start without the window", 403, "pairing_not_enabled")
	if st, _ := b.adminDo(t, "PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`); st != 200 {
		t.Fatalf("set password: %d", st)
	}
	if resp, err := http.Post(b.base+"/api/admin/ha/pairing", "application/json", strings.NewReader(`{}`)); err != nil || resp.StatusCode != 401 {
		t.Fatalf("pairing opened without a session: %v %v", resp.StatusCode, err)
	}
	v1(t, c, "POST", b.v1+"/pair/enable", "", map[string]any{}).want(t, "v1 pair/enable without a session", 401, "unauthorized")

	// Pair Home Assistant with read, control and power.
	grant := b.pair(t, c, homeAssistant, `["read","control","power"]`)
	token, _ := grant["access_token"].(string)
	info := getJSON[map[string]any](t, b.base+"/api/info")
	if len(token) < 43 || grant["token_type"] != "Bearer" || grant["device_id"] != info["box_id"] || grant["success"] != true {
		t.Fatalf("grant %v", grant)
	}
	if got, _ := json.Marshal(grant["scopes"]); string(got) != `["read","control","power"]` {
		t.Errorf("scopes %s", got)
	}
	if strings.Contains(b.logs.String(), token) {
		t.Error("the token is in the log")
	}

	// Every endpoint with the token.
	a := v1(t, c, "GET", b.v1+"/info", token, nil).want(t, "info", 200, "")
	if a.body["device_id"] != info["box_id"] || a.body["software_version"] != "test" || a.body["generation"] != "ng" || a.body["name"] != "box" {
		t.Errorf("info %s", a.raw)
	}
	v1(t, c, "POST", b.v1+"/control", token, map[string]any{"command": "play"}).want(t, "play with nothing queued", 409, "provider_unavailable")
	id := getJSON[[]map[string]any](t, b.base+"/api/library")[0]["id"].(string)
	post(t, b.base, `{"action":"folder","folder_id":"`+id+`"}`) // a child starts a story on the box
	a = v1(t, c, "GET", b.v1+"/state", token, nil).want(t, "state", 200, "")
	pb, _ := a.body["playback"].(map[string]any)
	if pb["state"] != "playing" || pb["title"] == nil || pb["duration"] != 30.0 || pb["muted"] != false || a.body["device"] == nil || a.body["metrics"] == nil {
		t.Errorf("state %s", a.raw)
	}
	for _, cmd := range []map[string]any{{"command": "pause"}, {"command": "play"}, {"command": "seek", "position": 12.5}, {"command": "set_volume", "value": 100}, {"command": "next"}, {"command": "previous"}} {
		v1(t, c, "POST", b.v1+"/control", token, cmd).want(t, "control "+cmd["command"].(string), 200, "")
	}
	if v := getJSON[map[string]any](t, b.base+"/api/status")["volume"]; v != 80.0 {
		t.Errorf("volume %v after set_volume 100: the cap of 80 must hold", v)
	}
	v1(t, c, "POST", b.v1+"/control", token, map[string]any{"command": "mute"}).want(t, "mute", 422, "unsupported_command")
	v1(t, c, "POST", b.v1+"/control", token, map[string]any{"command": "set_volume", "value": 101}).want(t, "volume 101", 400, "invalid_value")
	v1(t, c, "POST", b.v1+"/control", token, map[string]any{"command": "set_volume"}).want(t, "volume without value", 400, "invalid_request")
	v1(t, c, "POST", b.v1+"/control", token, map[string]any{}).want(t, "no command", 400, "invalid_request")
	v1(t, c, "GET", b.v1+"/update", token, nil).want(t, "update", 200, "")
	if a := v1(t, c, "GET", b.v1+"/outputs", token, nil).want(t, "outputs", 200, ""); len(a.body["targets"].([]any)) != 1 {
		t.Errorf("outputs %s", a.raw)
	}
	v1(t, c, "POST", b.v1+"/outputs/select", token, map[string]any{"target_id": "box"}).want(t, "select output", 200, "")
	v1(t, c, "POST", b.v1+"/outputs/select", token, map[string]any{"target_id": "hdmi"}).want(t, "select unknown output", 404, "not_found")
	// The folder playing has no cover (covers of every kind of folder:
	// TestEveryFolderKindEverywhere).
	v1(t, c, "GET", b.v1+"/media/cover/current", token, nil).want(t, "cover of a folder without one", 404, "not_found")
	if a := v1(t, c, "GET", b.v1+"/screenshot", token, nil).want(t, "screenshot", 200, ""); a.header.Get("Content-Type") != "image/png" {
		t.Errorf("screenshot content type %q", a.header.Get("Content-Type"))
	}
	v1(t, c, "POST", b.v1+"/speak", token, map[string]any{"text": "Hallo"}).want(t, "speak without notify", 403, "insufficient_scope")
	v1(t, c, "POST", b.v1+"/message", token, map[string]any{"message": "Gute Nacht", "title": "", "duration_ms": 8000}).want(t, "message without notify", 403, "insufficient_scope")
	v1(t, c, "GET", b.v1+"/state", "not-a-token", nil).want(t, "a wrong token", 401, "unauthorized")
	v1(t, c, "GET", b.v1+"/state", "", nil).want(t, "no token", 401, "unauthorized")
	v1(t, c, "GET", b.v1+"/nothing", token, nil).want(t, "unknown path", 404, "not_found")

	// Live state: the event stream sees a volume change made on the box.
	t.Run("events", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ws, _, err := websocket.Dial(ctx, "wss://"+b.haAddr+"/api/ha/v1/events", &websocket.DialOptions{
			HTTPClient: c, HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		var first struct {
			Event    string
			Sequence uint64
			Data     map[string]any
		}
		read := func() {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(msg, &first); err != nil {
				t.Fatal(err)
			}
		}
		read()
		if first.Event != "playback_changed" || first.Sequence == 0 {
			t.Fatalf("first event %+v", first)
		}
		post(t, b.base, `{"action":"volume","value":33}`)
		for first.Data["volume"] != 33.0 {
			read()
		}
	})

	// A second client that may only read.
	grant2 := b.pair(t, c, readOnly, `["read"]`)
	token2 := grant2["access_token"].(string)
	v1(t, c, "POST", b.v1+"/control", token2, map[string]any{"command": "pause"}).want(t, "control with read only", 403, "insufficient_scope")
	v1(t, c, "POST", b.v1+"/control", token, map[string]any{"command": "restart"}).want(t, "restart with power", 202, "")
	<-b.reboots
	b.stop()

	// The box comes back (the reboot) with the same identity and tokens.
	b = startHABox(t, media, data, clock)
	if spki2, _ := probe(t, b.haAddr); spki2 != spki {
		t.Errorf("fingerprint changed across a restart")
	}
	v1(t, c, "GET", b.v1+"/info", token2, nil).want(t, "token after restart", 200, "")
	v1(t, c, "POST", b.v1+"/control", token2, map[string]any{"command": "restart"}).want(t, "restart without power", 403, "insufficient_scope")
	v1(t, c, "POST", b.v1+"/pair/revoke", token2, map[string]any{"client_id": homeAssistant.id}).want(t, "revoking another client", 403, "insufficient_scope")
	v1(t, c, "POST", b.v1+"/pair/revoke", token2, map[string]any{"client_id": readOnly.id}).want(t, "revoke itself", 200, "")
	v1(t, c, "GET", b.v1+"/info", token2, nil).want(t, "revoked token", 401, "unauthorized")

	// Per-token rate limit, with Retry-After; the injected clock refills.
	var limited v1Answer
	for range 100 {
		if limited = v1(t, c, "GET", b.v1+"/health", "", nil); limited.status != 200 {
			t.Fatal("health is not rate limited per token")
		}
		if limited = v1(t, c, "GET", b.v1+"/info", token, nil); limited.status != 200 {
			break
		}
	}
	limited.want(t, "many requests", 429, "rate_limited")
	if limited.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	clock.Advance(5 * time.Second)
	v1(t, c, "GET", b.v1+"/info", token, nil).want(t, "after waiting", 200, "")

	// The parent lists and revokes.
	b.adminDo(t, "POST", "/api/admin/login", `{"password":"correct horse battery"}`)
	_, adminHA = b.adminDo(t, "GET", "/api/admin/ha", "")
	clients, _ := adminHA["clients"].([]any)
	if len(clients) != 1 || clients[0].(map[string]any)["client_id"] != homeAssistant.id || clients[0].(map[string]any)["last_used"] == nil {
		t.Errorf("clients %v", adminHA["clients"])
	}
	if st, _ := b.adminDo(t, "DELETE", "/api/admin/ha/clients/"+homeAssistant.id, ""); st != 200 {
		t.Errorf("revoke: %d", st)
	}
	v1(t, c, "GET", b.v1+"/state", token, nil).want(t, "token revoked by the parent", 401, "unauthorized")

	t.Run("wrong codes, a second start, expiry", func(t *testing.T) {
		startReq := map[string]any{"client_name": "Home Assistant", "client_id": homeAssistant.id, "requested_scopes": []string{"read"}}
		b.adminDo(t, "POST", "/api/admin/ha/pairing", "")
		start := v1(t, c, "POST", b.v1+"/pair/start", "", startReq).want(t, "start", 200, "")
		v1(t, c, "POST", b.v1+"/pair/start", "", startReq).want(t, "second start", 409, "pairing_in_progress")
		code := readCode(t, b.screen)
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		// While the code is on the screen, the screenshot served over the
		// network does not show it.
		checkScreenshotHidesCode(t, b.base+"/api/display/screenshot")
		for i := range 5 {
			v1(t, c, "POST", b.v1+"/pair/confirm", "", map[string]any{"pairing_id": start.body["pairing_id"], "client_id": homeAssistant.id, "code": wrong}).
				want(t, "wrong code "+string(rune('1'+i)), 403, "invalid_pairing_code")
		}
		v1(t, c, "POST", b.v1+"/pair/confirm", "", map[string]any{"pairing_id": start.body["pairing_id"], "client_id": homeAssistant.id, "code": code}).
			want(t, "right code after five wrong ones", 410, "pairing_expired")
		b.adminDo(t, "POST", "/api/admin/ha/pairing", "")
		if a := v1(t, c, "POST", b.v1+"/pair/start", "", startReq).want(t, "start in the cooldown", 429, "rate_limited"); a.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
		clock.Advance(time.Minute)
		b.adminDo(t, "POST", "/api/admin/ha/pairing", "")
		clock.Advance(61 * time.Second)
		v1(t, c, "POST", b.v1+"/pair/start", "", startReq).want(t, "start after the window closed", 403, "pairing_not_enabled")
		b.adminDo(t, "POST", "/api/admin/ha/pairing", "")
		start = v1(t, c, "POST", b.v1+"/pair/start", "", startReq).want(t, "start", 200, "")
		code = readCode(t, b.screen)
		clock.Advance(301 * time.Second)
		v1(t, c, "POST", b.v1+"/pair/confirm", "", map[string]any{"pairing_id": start.body["pairing_id"], "client_id": homeAssistant.id, "code": code}).
			want(t, "code after 300 s", 410, "pairing_expired")
		if strings.Contains(b.logs.String(), code) {
			t.Error("the code is in the log")
		}
	})

	t.Run("plain HTTP", func(t *testing.T) {
		// Plain HTTP to the TLS port.
		conn, err := net.Dial("tcp", b.haAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.Write([]byte("GET /api/ha/v1/health HTTP/1.1\r\nHost: box\r\n\r\n"))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != 400 || body["error"] != "invalid_request" || body["success"] != false {
			t.Errorf("plain HTTP on the TLS port: %d %v", resp.StatusCode, body)
		}
		// A v1 path on the plain port.
		v1(t, http.DefaultClient, "POST", b.base+"/api/ha/v1/pair/start", "", map[string]any{"client_id": "x"}).
			want(t, "v1 on :8090", 404, "not_found")
	})
}

// checkScreenshotHidesCode fetches the screenshot as any client on the
// network can and reads it as the test reads the screen.
func checkScreenshotHidesCode(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	img, err := png.Decode(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, image.Point{}, draw.Src)
	if code, _ := displaytest.ReadCode(rgba); code != "" {
		t.Errorf("the screenshot shows %q", code)
	}
}
