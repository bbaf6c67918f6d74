// Package hav1 serves the home-automation API v1 (the MuPiBox contract that
// Home Assistant's integration speaks) on its own TLS port, 8443, and only
// there: /api/ha/v1/... with pairing, scoped bearer tokens and the
// contract's error body. routes shows the whole API in one place; respond
// maps errors to the contract in one place.
package hav1

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"
	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/gate"
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/metrics"
	"github.com/storybox/storybox/services/playerd/internal/netlimit"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Prefix is where the API lives.
const Prefix = "/api/ha/v1"

// Player is the command path every input shares (the local API's
// POST /api/command goes through the same one), and the status.
type Player interface {
	Status() player.Status
	Do(ctx context.Context, cmd player.Command) (player.Status, error)
}

// Covers reads a cover image by the id the player status names.
type Covers interface {
	Cover(id string) ([]byte, string, error)
}

// Speaker reads a text aloud (see api.Speaker).
type Speaker interface {
	Speak(ctx context.Context, text, language string) (started bool, err error)
}

// Display is what the API needs of the touch screen, through the core
// (box.Screen). Screenshot must never show the pairing code.
type Display interface {
	ShowMessage(message.Request) (message.Message, error)
	Screenshot(ctx context.Context) ([]byte, error)
}

// CA gives out the certificate clients pin.
type CA interface {
	CAPEM() []byte
}

// Device is the device part of GET /state; what the box cannot tell is nil.
type Device struct {
	BatteryPercent *int     `json:"battery_percent"`
	Charging       *bool    `json:"charging"`
	WifiSignalDBM  *int     `json:"wifi_signal_dbm"`
	IPAddress      *string  `json:"ip_address"`
	UptimeSeconds  *float64 `json:"uptime_seconds"`
}

// Output is the box's one audio output, for GET /outputs.
type Output struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Subtitle string `json:"subtitle"`
}

// Deps are the parts of the box the API reaches. Optional parts that are
// nil make their endpoints answer 503 or, for power, unsupported_command.
type Deps struct {
	Log     *slog.Logger
	Version string
	Name    string // the box's name for /info (its host name)
	Pairing *pairing.Manager
	CA      CA
	Player  Player
	Covers  Covers
	Device  func() Device
	Metrics func() metrics.Snapshot // optional
	Output  Output
	Speaker Speaker // optional
	Display Display // optional
	// Power carries out "reboot" or "poweroff" after the answer went out;
	// nil when this machine cannot (not the box).
	Power  func(action string) error
	Events Feed // optional: no /events stream without it
	// Auth and Hosts: the administrator session that opens pairing, and the
	// names the box answers to. Both required.
	Auth  *auth.Manager
	Hosts *auth.Hosts
}

type handler struct {
	Deps
	log     *slog.Logger
	streams chan struct{} // open event streams
	// covers bounds the covers read at once (each whole into memory).
	covers  *gate.Gate
	surface answer.Surface
}

// maxStreams bounds open event streams; each holds a goroutine and a
// connection.
const maxStreams = 8

// NewHandler returns the API with its middleware.
func NewHandler(d Deps) http.Handler {
	if d.Pairing == nil || d.CA == nil || d.Player == nil || d.Auth == nil || d.Hosts == nil {
		panic("hav1: Deps.Pairing, CA, Player, Auth and Hosts are required")
	}
	h := &handler{Deps: d, log: d.Log, streams: make(chan struct{}, maxStreams), surface: newSurface(d.Log),
		covers: gate.New("cover requests", gate.Limits{Run: 2, Wait: 4, Patience: 5 * time.Second})}
	r := mux.NewRouter()
	h.routes(r)
	r.NotFoundHandler = http.HandlerFunc(h.surface.NotFound)
	r.MethodNotAllowedHandler = http.HandlerFunc(h.surface.MethodNotAllowed)
	return securityHeaders(netlimit.Refuse(h.checkHost(r), h.fail))
}

// routes is the whole API. Each route names what it needs: nothing (open
// to anyone who reaches the port), a token with a scope, or the
// administrator.
func (h *handler) routes(r *mux.Router) {
	// No subrouter: its routes share its prefix matcher, and a later
	// route's match of it clears an earlier one's method mismatch, so a
	// wrong method was answered as an unknown path.
	get := func(path string, f http.HandlerFunc) {
		r.HandleFunc(Prefix+path, f).Methods(http.MethodGet, http.MethodHead)
	}
	post := func(path string, f http.HandlerFunc) { r.HandleFunc(Prefix+path, f).Methods(http.MethodPost) }

	// Open: what a client needs before it has a token.
	get("/health", h.health)
	get("/tls/ca", h.caPEM)
	post("/pair/start", h.pairStart)
	post("/pair/confirm", h.pairConfirm)
	// The parent, with an administrator session.
	post("/pair/enable", h.admin(h.pairEnable))
	// A paired client.
	post("/pair/revoke", h.paired(h.pairRevoke))
	get("/info", h.need(pairing.Read, h.info))
	get("/state", h.need(pairing.Read, h.state))
	get("/media/cover/current", h.need(pairing.Read, h.cover))
	get("/screenshot", h.need(pairing.Read, h.screenshot))
	get("/outputs", h.need(pairing.Read, h.outputs))
	get("/update", h.need(pairing.Read, h.update))
	get("/events", h.need(pairing.Read, h.events))
	post("/control", h.need(pairing.Control, h.control))
	post("/outputs/select", h.need(pairing.Control, h.selectOutput))
	post("/speak", h.need(pairing.Notify, h.speak))
	post("/message", h.need(pairing.Notify, h.message))
	post("/power", h.need(pairing.Power, h.power))
}

// Routes lists every route as "METHOD /path", for the API reference test.
func Routes() []string {
	r := mux.NewRouter()
	(&handler{}).routes(r)
	var out []string
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, _ := route.GetPathTemplate()
		methods, _ := route.GetMethods()
		for _, m := range methods {
			if m != http.MethodHead {
				out = append(out, m+" "+path)
			}
		}
		return nil
	})
	return out
}

// NotHere answers v1 paths on the plain-HTTP port: tokens and codes never
// travel in clear, so the API is not served there at all.
func NotHere() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := newSurface(nil)
		s.Fail(w, r, errNotHere)
	})
}
