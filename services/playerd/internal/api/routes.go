// Package api serves the box's local HTTP API (port 8090). routes shows the
// whole API in one place.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/gorilla/mux"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Player is what the API needs of the engine.
type Player interface {
	Status() player.Status
	Do(ctx context.Context, cmd player.Command) (player.Status, error)
}

// Library is what the API needs of the media library.
type Library interface {
	Folders() []library.Folder
	Cover(id string) ([]byte, string, error)
	Scan() (library.Stats, error)
}

// HatSource returns the battery board status as hatd serves it.
type HatSource interface {
	HatStatus(ctx context.Context) (json.RawMessage, error)
}

// Speaker reads a text aloud. It returns once the speech has started, or
// with started false when rendering took too long and it will play later.
type Speaker interface {
	Speak(ctx context.Context, text, language string) (started bool, err error)
}

// Deps are the parts of the box the API reaches. A nil optional part makes
// its endpoints answer 503.
type Deps struct {
	Version string
	Log     *slog.Logger
	Player  Player
	Library Library
	Home    func() any // the /api/home model
	Info    func() any // the /api/info object
	Metrics func() any // the /api/system/metrics object
	System  func() any // the /api/system object
	Hat     HatSource  // optional
	Speaker Speaker    // optional
	Display Display    // optional
	// Restrictions are the parental rules in force, shown beside the
	// player status; Parental the rules a parent sets. Both optional.
	Restrictions func() any
	Parental     Parental
	// Auth holds the administrator password and sessions; Hosts the names
	// the box answers to. Both are required.
	Auth  *auth.Manager
	Hosts *auth.Hosts
}

type handler struct {
	Deps
	log *slog.Logger
}

// NewHandler returns the API with its middleware.
func NewHandler(d Deps) http.Handler {
	if d.Auth == nil || d.Hosts == nil {
		panic("api: Deps.Auth and Deps.Hosts are required")
	}
	h := &handler{Deps: d, log: d.Log}
	r := mux.NewRouter()
	h.routes(r)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.writeError(w, req, http.StatusNotFound, "no such endpoint: "+req.URL.Path)
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.writeError(w, req, http.StatusMethodNotAllowed, "method "+req.Method+" is not allowed on "+req.URL.Path)
	})
	// Outside in: every response gets the security headers; a foreign Host
	// and a cross-site write are refused before anything else runs; then
	// the request becomes a caller, and the guard applies the protection
	// rules by path, so routes added under /api/admin/ are covered
	// without further ado.
	return securityHeaders(h.checkHost(h.sameOrigin(h.identify(h.guard(r)))))
}

// routes is the whole API.
func (h *handler) routes(r *mux.Router) {
	get := func(path string, f http.HandlerFunc) { r.HandleFunc(path, f).Methods(http.MethodGet, http.MethodHead) }
	post := func(path string, f http.HandlerFunc) { r.HandleFunc(path, f).Methods(http.MethodPost) }
	put := func(path string, f http.HandlerFunc) { r.HandleFunc(path, f).Methods(http.MethodPut) }

	get("/api/health", h.health)
	get("/api/status", h.status)
	get("/api/info", h.info)
	get("/api/library", h.library)
	get("/api/cover/{id}", h.cover)
	get("/api/home", h.home)
	get("/api/hat/status", h.hatStatus)
	get("/api/mupihat/status", h.hatStatus)
	get("/api/system", h.system)
	get("/api/system/metrics", h.metrics)
	get("/api/message", h.activeMessage)
	get("/api/ui-state", h.uiState)
	get("/api/display/screenshot", h.screenshot)

	post("/api/command", h.command)
	post("/api/speak", h.speak)
	post("/api/message", h.message)

	// The admin area: /api/admin/auth and /api/admin/login are open,
	// everything else under /api/admin/ needs a session once a password
	// is set (guard).
	get("/api/admin/auth", h.authStatus)
	post("/api/admin/login", h.login)
	post("/api/admin/logout", h.logout)
	put("/api/admin/password", h.setPassword)
	post("/api/admin/library/rescan", h.rescan)
	get("/api/admin/parental", h.parental)
	put("/api/admin/parental", h.setParental)
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

// pathVar reads a route variable; handlers never touch the router directly.
func pathVar(r *http.Request, name string) string { return mux.Vars(r)[name] }
