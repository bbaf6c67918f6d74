package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/storybox/storybox/services/playerd/internal/display/displaytest"
)

// haClient is Home Assistant: paired once through the box's screen, then
// polling /state, holding /events open, now and then a command, a message
// or an announcement, and re-pairing (a new token) once in a while.
type haClient struct {
	s  *soak
	id string

	mu      sync.Mutex
	token   string
	old     string // the token before the last re-pairing: refused since
	pairing bool   // a confirm in flight: a kill may have cut off its token
	hc      *http.Client
}

const haSource = "127.0.0.51"

var haScopes = []string{"read", "control", "notify"}

func newHAClient(s *soak) *haClient {
	return &haClient{s: s, id: "5b0e1c0e-5a4e-4f5e-9b1d-50a4c0de0001"}
}

func (h *haClient) client() *client {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &client{name: "home-automation", s: h.s, hc: h.hc, base: h.s.box.haBase}
}

func (h *haClient) auth() http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return http.Header{"Authorization": {"Bearer " + h.token}}
}

// pair is the whole flow as a parent goes through it: the admin page opens
// the window, Home Assistant starts, the parent reads the code off the
// box's screen and types it in. gated: through the gate (false while the
// restart holds it, and at the first start).
func (h *haClient) pair(ctx context.Context, gated ...bool) error {
	g := len(gated) > 0 && gated[0]
	if a, ok := h.s.parent.fetch(ctx, jsonReq("POST /api/admin/ha/pairing", "POST", "/api/admin/ha/pairing", map[string]any{"scopes": haScopes}, 200), g); !ok {
		return fmt.Errorf("open pairing: %d %v %s", a.code, a.err, a.body)
	}
	// Before the first pairing Home Assistant trusts the certificate it
	// was shown; after it, the box's CA.
	c := h.client()
	if c.hc == nil {
		c.hc = &http.Client{Transport: transport(haSource, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}), Timeout: 30 * time.Second}
	}
	start, ok := c.fetch(ctx, jsonReq("POST /pair/start", "POST", "/pair/start",
		map[string]any{"client_name": "Home Assistant", "client_id": h.id, "requested_scopes": haScopes}, 200), g)
	if !ok {
		return fmt.Errorf("pair/start: %d %v %s", start.code, start.err, start.body)
	}
	var st struct {
		PairingID string `json:"pairing_id"`
	}
	if err := start.json(&st); err != nil {
		return err
	}
	code, err := h.readCode(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.pairing = true
	h.mu.Unlock()
	conf, ok := c.fetch(ctx, jsonReq("POST /pair/confirm", "POST", "/pair/confirm",
		map[string]any{"pairing_id": st.PairingID, "client_id": h.id, "code": code}, 200), g)
	if !ok {
		return fmt.Errorf("pair/confirm: %d %v %s", conf.code, conf.err, conf.body)
	}
	var grant struct {
		Token string `json:"access_token"`
	}
	if err := conf.json(&grant); err != nil || grant.Token == "" {
		return fmt.Errorf("pair/confirm answered %s", conf.body)
	}
	caAnswer, ok := c.fetch(ctx, jsonReq("GET /tls/ca", "GET", "/tls/ca", nil, 200), g)
	if !ok {
		return fmt.Errorf("tls/ca: %d %v", caAnswer.code, caAnswer.err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caAnswer.body) {
		return errors.New("the CA does not parse")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.old, h.token, h.pairing = h.token, grant.Token, false
	h.hc = &http.Client{Transport: transport(haSource, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}), Timeout: 30 * time.Second}
	h.s.rec.count("home automation pairings", 1)
	return nil
}

// readCode reads the six digits off the screen, as the parent does.
func (h *haClient) readCode(ctx context.Context) (string, error) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		img, err := h.s.control.frame()
		if err == nil {
			if code, err := displaytest.ReadCode(img); err == nil && len(code) == 6 {
				return code, nil
			}
		}
		if !pause(ctx, 200*time.Millisecond) {
			return "", ctx.Err()
		}
	}
	return "", errors.New("no pairing code appeared on the screen")
}

// verify is the check after a restart: the token still opens the API, a
// replaced one does not. A pairing the kill cut off is done again.
func (h *haClient) verify(ctx context.Context, life int) {
	c := h.client()
	r := jsonReq("GET /info", "GET", "/info", nil, 200, 401)
	r.header = h.auth()
	a := c.send(ctx, r)
	h.mu.Lock()
	pairing, old := h.pairing, h.old
	h.mu.Unlock()
	switch {
	case a.err != nil:
		h.s.rec.violate(life, "lost", "home automation after the restart: %v", a.err)
	case a.code == 401 && pairing:
		h.s.rec.count("pairings cut off by a kill", 1)
		if err := h.pair(ctx); err != nil {
			h.s.rec.violate(life, "pairing", "pairing again after a kill cut it off: %v", err)
		}
	case a.code != 200:
		h.s.rec.violate(life, "lost", "the paired token is refused after the restart: %d %s", a.code, a.body)
	default:
		h.mu.Lock()
		h.pairing = false // the kill came before the confirm: the old token holds
		h.mu.Unlock()
	}
	if old != "" {
		r.header = http.Header{"Authorization": {"Bearer " + old}}
		if a := c.send(ctx, r); a.err == nil && a.code != 401 {
			h.s.rec.violate(life, "lost", "the token replaced by pairing again still opens the API after the restart: %d", a.code)
		}
	}
}

// homeAutomation is the integration's loop: /state every couple of seconds
// (its latency counts with the pollers'), the event stream held open, now
// and then a command, a message or an announcement.
func (s *soak) homeAutomation(ctx context.Context) {
	rng := s.rng("home automation")
	h := s.ha
	go h.events(ctx)
	for pause(ctx, thinkTime(rng, 1500*time.Millisecond, 300*time.Millisecond)) {
		c := h.client()
		var r req
		switch n := rng.IntN(100); {
		case n < 80:
			r = jsonReq("GET /state", "GET", "/state", nil, 200)
		case n < 88:
			v := rng.IntN(101)
			r = jsonReq("POST /control set_volume", "POST", "/control", map[string]any{"command": "set_volume", "value": v}, 200)
			s.views.setPending("home automation", &pendingChange{action: "set_volume", value: v})
		case n < 92:
			cmd := []string{"play", "pause", "next", "previous"}[rng.IntN(4)]
			r = jsonReq("POST /control "+cmd, "POST", "/control", map[string]any{"command": cmd}, 200, 403, 409)
			s.views.setPending("home automation", &pendingChange{action: cmd})
		case n < 95:
			r = jsonReq("POST /message", "POST", "/message", map[string]any{"message": "Essen ist fertig", "title": "Home Assistant", "duration_ms": 3000}, 200)
		case n < 97:
			r = jsonReq("POST /speak", "POST", "/speak", map[string]any{"text": speechTexts[rng.IntN(len(speechTexts))]}, 200, 202)
		case n < 99:
			r = jsonReq("GET /info", "GET", "/info", nil, 200)
		default:
			life := int(s.gate.life.Load())
			if err := h.pair(ctx, true); err != nil && ctx.Err() == nil && !s.gate.interrupted(life) {
				s.rec.violate(life, "pairing", "pairing again: %v", err)
			}
			continue
		}
		r.header = h.auth()
		a, ok := c.do(ctx, r)
		if !a.interrupted {
			s.views.setPending("home automation", nil)
		}
		if ok && r.path == "/state" {
			s.rec.addPoll("home-automation", a.sent, a.got.Sub(a.sent))
		}
		if a.code == 429 || a.code == 503 {
			pause(ctx, a.retryAfter())
		}
	}
}

// events holds the v1 event stream open: playback changes with rising
// sequence numbers; a close by the box while it is up is a finding unless
// it says the client fell behind (1013, documented).
func (h *haClient) events(ctx context.Context) {
	s := h.s
	for ctx.Err() == nil {
		life := s.gate.enter()
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ws, resp, err := websocket.Dial(dctx, "wss://127.0.0.1:"+fmt.Sprint(s.box.haPort)+"/api/ha/v1/events",
			&websocket.DialOptions{HTTPClient: h.client().hc, HTTPHeader: h.auth()})
		cancel()
		interrupted := s.gate.interrupted(life)
		s.gate.leave()
		a := answer{err: err, interrupted: err != nil && interrupted, life: life}
		if resp != nil {
			a.code, a.hdr, a.err = resp.StatusCode, resp.Header, nil
			if resp.StatusCode == 101 {
				a.code = 200
			}
		}
		if ctx.Err() != nil {
			return
		}
		if !s.rec.judge(life, "GET /events (WebSocket)", &a, []int{200, 401}) || err != nil {
			pause(ctx, time.Second)
			continue
		}
		var last uint64
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				switch {
				case ctx.Err() != nil, s.gate.interrupted(life):
				case websocket.CloseStatus(err) == websocket.StatusTryAgainLater:
					s.rec.count("v1 streams closed as behind", 1)
				default:
					s.rec.violate(life, "stream", "v1 events: the box ended the stream: %v", err)
				}
				break
			}
			var ev struct {
				Event    string `json:"event"`
				Sequence uint64 `json:"sequence"`
			}
			if err := json.Unmarshal(msg, &ev); err != nil || ev.Event != "playback_changed" || ev.Sequence <= last && last != 0 {
				s.rec.violate(life, "stream", "v1 events: %.200s after sequence %d", msg, last)
			}
			last = ev.Sequence
			s.rec.count("v1 events read", 1)
		}
		ws.CloseNow()
		pause(ctx, time.Second)
	}
}

var speechTexts = []string{"Abendessen ist fertig!", "Zähne putzen, bitte.", "Gute Nacht, schlaf gut.", "Zeit zum Aufräumen."}
