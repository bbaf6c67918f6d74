// Package api serves the box's local HTTP API (port 8090). routes shows the
// whole API in one place.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/gorilla/mux"
	"github.com/storybox/storybox/services/playerd/internal/adminui"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/hav1"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/netlimit"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/state"
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
	Home    func() any   // the /api/home model
	Info    func() any   // the /api/info object
	Metrics func() any   // the /api/system/metrics object
	System  func() any   // the /api/system object
	Hat     HatSource    // optional
	Speaker Speaker      // optional
	Display Display      // optional
	Net     Connectivity // optional: netd, the Wi-Fi
	// Restrictions are the parental rules in force, shown beside the
	// player status; Parental the rules a parent sets. Both optional.
	Restrictions func() any
	Parental     Parental
	// Scan is the library scan's progress, shown beside the player status
	// (optional).
	Scan func() any
	// Auth holds the administrator password and sessions; Hosts the names
	// the box answers to. Both are required.
	Auth  *auth.Manager
	Hosts *auth.Hosts
	// Events is the event feed behind GET /api/events (optional);
	// Streams bound its streams.
	Events  *events.Bus
	Streams StreamLimits
	// The admin area, by capability (admin_*.go); each optional.
	Resume       func() map[string]state.ResumePoint // the resume points, by folder id
	Settings     SettingsAdmin
	Navigation   NavigationAdmin
	LibraryAdmin LibraryAdmin
	SystemAdmin  SystemAdmin
	Backup       BackupAdmin
	// HA is the parent's side of the home-automation API; nil: off.
	HA HomeAutomation
	// Cards and Input are the card readers and buttons; optional.
	Cards CardsAdmin
	Input InputAdmin
	// Radio is the parent's stations and podcasts; optional.
	Radio RadioAdmin
}

type handler struct {
	Deps
	log         *slog.Logger
	streams     streamCounter
	statusCache statusCache
	heavy       heavy
}

// NewHandler returns the API with its middleware.
func NewHandler(d Deps) http.Handler {
	if d.Auth == nil || d.Hosts == nil {
		panic("api: Deps.Auth and Deps.Hosts are required")
	}
	h := &handler{Deps: d, log: d.Log, heavy: newHeavy()}
	r := mux.NewRouter()
	h.routes(r)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.writeError(w, req, http.StatusNotFound, "no such endpoint: "+req.URL.Path)
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.writeError(w, req, http.StatusMethodNotAllowed, "method "+req.Method+" is not allowed on "+req.URL.Path)
	})
	// Outside in: every response gets the security headers; a connection
	// over the connection limit is answered 503 and closed, a foreign Host
	// and a cross-site write are refused before anything else runs; then
	// the request becomes a caller, and the guard applies the protection
	// rules by path, so routes added under /api/admin/ are covered
	// without further ado.
	return securityHeaders(netlimit.Refuse(h.checkHost(h.sameOrigin(h.identify(h.guard(polled(r, h.status))))), h.fail))
}

// polled serves GET /api/status, which apps and the web page poll, past
// the router: matching its routes copies the request twice, for path
// variables the status has none of. The route stays in routes (and so in
// the API reference); other methods meet the router's answer.
func polled(r http.Handler, status http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/api/status" && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
			status(w, req)
			return
		}
		r.ServeHTTP(w, req)
	})
}

// routes is the whole API.
func (h *handler) routes(r *mux.Router) {
	get := func(path string, f http.HandlerFunc) { r.HandleFunc(path, f).Methods(http.MethodGet, http.MethodHead) }
	post := func(path string, f http.HandlerFunc) { r.HandleFunc(path, f).Methods(http.MethodPost) }
	put := func(path string, f http.HandlerFunc) { r.HandleFunc(path, f).Methods(http.MethodPut) }
	patch := func(path string, f http.HandlerFunc) { r.HandleFunc(path, f).Methods(http.MethodPatch) }
	del := func(path string, f http.HandlerFunc) { r.HandleFunc(path, f).Methods(http.MethodDelete) }

	get("/api/health", h.health)
	get("/api/status", h.status)
	get("/api/events", h.eventStream)
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
	// is set (guard). JSON bodies are at most MaxBody; uploads have the
	// library's limits.
	get("/api/admin/auth", h.authStatus)
	post("/api/admin/login", h.login)
	post("/api/admin/logout", h.logout)
	put("/api/admin/password", h.setPassword)
	get("/api/admin/settings", h.getSettings)
	put("/api/admin/settings", h.putSettings)
	get("/api/admin/navigation", h.getNavigation)
	put("/api/admin/navigation", h.putNavigation)
	get("/api/admin/resume", h.getResume)
	post("/api/admin/library/rescan", h.rescan)
	get("/api/admin/library/folders", h.listFolders)
	post("/api/admin/library/folders", h.createFolder)
	patch("/api/admin/library/folders/{id}", h.renameFolder)
	del("/api/admin/library/folders/{id}", h.deleteFolder)
	post("/api/admin/library/folders/{id}/files", h.uploadFiles)
	put("/api/admin/library/folders/{id}/cover", h.setCover)
	get("/api/admin/system", h.adminSystem)
	post("/api/admin/system/power", h.power)
	get("/api/admin/backup", h.backup)
	post("/api/admin/restore", h.restore)

	// The network area (netd): open from the box itself, from the
	// network only with an administrator session (guard).
	get("/api/connectivity/wifi/status", h.wifiStatus)
	get("/api/connectivity/wifi/adapters", h.wifiAdapters)
	get("/api/connectivity/wifi", h.wifiScan)
	post("/api/connectivity/wifi/connect", h.wifiConnect)
	get("/api/connectivity/wifi/networks", h.wifiNetworks)
	post("/api/connectivity/wifi/forget", h.wifiForget)
	put("/api/connectivity/wifi/country", h.wifiCountry)

	// Home automation: the parent pairs and revokes clients here; the API
	// itself is on the TLS port, and its paths are refused here in its own
	// error shape, so no token or code ever travels in clear.
	get("/api/admin/ha", h.haStatus)
	post("/api/admin/ha/pairing", h.haEnable)
	del("/api/admin/ha/pairing", h.haCancel)
	del("/api/admin/ha/clients/{client_id}", h.haRevoke)
	r.PathPrefix(hav1.Prefix + "/").Handler(hav1.NotHere())

	// Cards and buttons. The fixed paths come before /cards/{id}, which
	// would take them as ids (and refuse them: ids are digits and capitals).
	get("/api/admin/cards", h.getCards)
	put("/api/admin/cards", h.putCards)
	get("/api/admin/cards/unknown", h.unknownCards)
	del("/api/admin/cards/unknown/{id}", h.forgetUnknownCard)
	get("/api/admin/cards/reads", h.cardReads)
	post("/api/admin/cards/learn", h.startLearn)
	get("/api/admin/cards/learn", h.learning)
	del("/api/admin/cards/learn", h.stopLearn)
	put("/api/admin/cards/{id}", h.putCard)
	del("/api/admin/cards/{id}", h.deleteCard)
	get("/api/admin/input", h.getInput)
	put("/api/admin/input", h.putInput)
	get("/api/admin/stations", h.listStations)
	post("/api/admin/stations", h.addStation)
	put("/api/admin/stations/{id}", h.updateStation)
	del("/api/admin/stations/{id}", h.deleteStation)
	get("/api/admin/podcasts", h.listPodcasts)
	post("/api/admin/podcasts", h.addPodcast)
	put("/api/admin/podcasts/{id}", h.updatePodcast)
	del("/api/admin/podcasts/{id}", h.deletePodcast)
	post("/api/admin/podcasts/{id}/refresh", h.refreshPodcast)
	get("/api/admin/parental", h.parental)
	put("/api/admin/parental", h.setParental)

	// The parents' admin page: static files, open to read (what they do
	// needs a session through the API above), with a CSP of their own.
	r.PathPrefix(adminui.Prefix).Handler(adminui.Handler()).Methods(http.MethodGet, http.MethodHead)
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
