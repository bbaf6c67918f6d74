// Package api serves the box's local HTTP API (port 8090). routes shows the
// whole API in one place.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/gorilla/mux"
	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/adminui"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/measure"
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/metrics"
	"github.com/storybox/storybox/services/playerd/internal/netlimit"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/state"
	"github.com/storybox/storybox/services/playerd/internal/system"
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
	// Views are what the read-only routes answer with, read at each
	// request.
	Views   Views
	Hat     HatSource    // optional
	Speaker Speaker      // optional
	Display Display      // optional: the core's facet of the screen (box.Screen)
	Net     Connectivity // optional: netd, the Wi-Fi
	// Parental is the rules a parent sets (optional).
	Parental Parental
	// Auth holds the administrator password and sessions; Hosts the names
	// the box answers to. Both are required.
	Auth  *auth.Manager
	Hosts *auth.Hosts
	// Events is the event feed behind GET /api/events (optional);
	// Streams bound its streams.
	Events  *events.Bus
	Streams StreamLimits
	// The admin area, by capability (admin_*.go); each optional.
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
	// UIRestart reaches the screen's supervision (a request, not the
	// screen); optional.
	UIRestart ScreenRestarts
	// Refused answers the paths of another API that must not be served
	// here, by path prefix, in that API's own words: the home-automation
	// API's, which lives on the TLS port only.
	Refused map[string]http.Handler
}

// Views are the core's and the machine's state as the API shows it, each
// read when a request asks; a nil one is left out (Restrictions, Scan) or
// answers 503 (Resume), and the others are required.
type Views struct {
	Home    func() home.Home      // GET /api/home
	Info    func() map[string]any // GET /api/info
	Metrics func() metrics.Snapshot
	System  func() system.Status
	// Restrictions are the parental rules in force and Scan the library
	// scan's progress, both shown beside the player status.
	Restrictions func() rules.Restrictions
	Scan         func() library.Progress
	Resume       func() map[string]state.ResumePoint // GET /api/admin/resume, by folder id
	// Loudness is how much of the library is measured (GET
	// /api/admin/loudness); nil answers 503.
	Loudness func() measure.Progress
}

type handler struct {
	Deps
	log         *slog.Logger
	streams     streamCounter
	statusCache statusCache
	heavy       heavy
	surface     answer.Surface
}

// NewHandler returns the API with its middleware.
func NewHandler(d Deps) http.Handler {
	if d.Auth == nil || d.Hosts == nil {
		panic("api: Deps.Auth and Deps.Hosts are required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	h := &handler{Deps: d, log: d.Log, heavy: newHeavy(), surface: newSurface(d.Log)}
	r := mux.NewRouter()
	h.routes(r)
	r.NotFoundHandler = http.HandlerFunc(h.surface.NotFound)
	r.MethodNotAllowedHandler = http.HandlerFunc(h.surface.MethodNotAllowed)
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

// Parts of the box the API may run without. A route of a missing part
// answers 503 with its error (clients learn the part is off); the route
// stays, so the reference lists every route either way.
var (
	errNoHat          = fault.New(fault.Unavailable, "battery board service is not configured")
	errNoSpeaker      = fault.New(fault.Unavailable, "tts unavailable")
	errNoDisplay      = message.ErrNoDisplay
	errNoEvents       = fault.New(fault.Unavailable, "event feed unavailable")
	errNoSettings     = fault.New(fault.Unavailable, "settings unavailable")
	errNoNavigation   = fault.New(fault.Unavailable, "navigation unavailable")
	errNoResume       = fault.New(fault.Unavailable, "player state unavailable")
	errNoLoudness     = fault.New(fault.Unavailable, "loudness measurement unavailable")
	errNoLibraryAdmin = fault.New(fault.Unavailable, "library management unavailable")
	errNoSystemAdmin  = fault.New(fault.Unavailable, "system information unavailable")
	errNoBackup       = fault.New(fault.Unavailable, "backup unavailable")
	errNoNetd         = fault.New(fault.Unavailable, "network service is not configured")
	errNoHA           = fault.New(fault.Unavailable, "the home-automation API is off")
	errNoCards        = fault.New(fault.Unavailable, "cards unavailable")
	errNoInput        = fault.New(fault.Unavailable, "input unavailable")
	errNoRadio        = fault.New(fault.Unavailable, "radio and podcasts are not available")
	errNoParental     = fault.New(fault.Unavailable, "parental rules unavailable")
)

// part adds the routes of one part of the box: its handlers when it is
// there (missing is nil), otherwise an answer of missing.
type part struct {
	h       *handler
	r       *mux.Router
	missing error
}

func (h *handler) part(r *mux.Router, present bool, missing error) part {
	if present {
		missing = nil
	}
	return part{h, r, missing}
}

func (p part) add(method, path string, f http.HandlerFunc) {
	if p.missing != nil {
		err := p.missing
		f = func(w http.ResponseWriter, r *http.Request) { p.h.fail(w, r, err) }
	}
	methods := []string{method}
	if method == http.MethodGet {
		methods = append(methods, http.MethodHead)
	}
	p.r.HandleFunc(path, f).Methods(methods...)
}

func (p part) get(path string, f http.HandlerFunc)    { p.add(http.MethodGet, path, f) }
func (p part) post(path string, f http.HandlerFunc)   { p.add(http.MethodPost, path, f) }
func (p part) put(path string, f http.HandlerFunc)    { p.add(http.MethodPut, path, f) }
func (p part) patch(path string, f http.HandlerFunc)  { p.add(http.MethodPatch, path, f) }
func (p part) delete(path string, f http.HandlerFunc) { p.add(http.MethodDelete, path, f) }

// routes is the whole API, by the part of the box each route needs.
func (h *handler) routes(r *mux.Router) {
	always := h.part(r, true, nil)
	always.get("/api/health", h.health)
	always.get("/api/status", h.status)
	always.get("/api/info", h.info)
	always.get("/api/licenses", h.licenses)
	always.get("/api/library", h.library)
	always.get("/api/cover/{id}", h.cover)
	always.get("/api/home", h.home)
	always.get("/api/system", h.system)
	always.get("/api/system/metrics", h.metrics)
	always.post("/api/command", h.command)
	h.part(r, h.Events != nil, errNoEvents).get("/api/events", h.eventStream)
	hat := h.part(r, h.Hat != nil, errNoHat)
	hat.get("/api/hat/status", h.hatStatus)
	hat.get("/api/mupihat/status", h.hatStatus)
	display := h.part(r, h.Display != nil, errNoDisplay)
	display.get("/api/message", h.activeMessage)
	display.get("/api/ui-state", h.uiState)
	display.get("/api/display/screenshot", h.screenshot)
	// The same picture for the admin area (Home Assistant's camera), behind
	// its login: one screenshot, blanked the same way.
	display.get("/api/admin/screenshot", h.screenshot)
	h.part(r, h.UIRestart != nil, errNoDisplay).post("/api/admin/ui/restart", h.restartUI)
	// A message or a text to speak is checked even while the part is
	// missing: a client learns its mistake before the box's.
	always.post("/api/message", h.message)
	always.post("/api/speak", h.speak)

	// The admin area: /api/admin/auth and /api/admin/login are open,
	// everything else under /api/admin/ needs a session once a password
	// is set (guard). JSON bodies are at most MaxBody; uploads have the
	// library's limits.
	always.get("/api/admin/auth", h.authStatus)
	always.post("/api/admin/login", h.login)
	always.post("/api/admin/logout", h.logout)
	always.put("/api/admin/password", h.setPassword)
	always.post("/api/admin/library/rescan", h.rescan)
	settings := h.part(r, h.Settings != nil, errNoSettings)
	settings.get("/api/admin/settings", h.getSettings)
	settings.put("/api/admin/settings", h.putSettings)
	navigation := h.part(r, h.Navigation != nil, errNoNavigation)
	navigation.get("/api/admin/navigation", h.getNavigation)
	navigation.put("/api/admin/navigation", h.putNavigation)
	h.part(r, h.Views.Resume != nil, errNoResume).get("/api/admin/resume", h.getResume)
	h.part(r, h.Views.Loudness != nil, errNoLoudness).get("/api/admin/loudness", h.getLoudness)
	library := h.part(r, h.LibraryAdmin != nil, errNoLibraryAdmin)
	library.get("/api/admin/library/folders", h.listFolders)
	library.post("/api/admin/library/folders", h.createFolder)
	library.patch("/api/admin/library/folders/{id}", h.renameFolder)
	library.delete("/api/admin/library/folders/{id}", h.deleteFolder)
	library.post("/api/admin/library/folders/{id}/files", h.uploadFiles)
	library.put("/api/admin/library/folders/{id}/cover", h.setCover)
	system := h.part(r, h.SystemAdmin != nil, errNoSystemAdmin)
	system.get("/api/admin/system", h.adminSystem)
	system.post("/api/admin/system/power", h.power)
	backup := h.part(r, h.Backup != nil, errNoBackup)
	backup.get("/api/admin/backup", h.backup)
	backup.post("/api/admin/restore", h.restore)

	// The network area (netd): open from the box itself, from the
	// network only with an administrator session (guard). Its bodies are
	// checked before whether netd runs (h.netd), as the message's are.
	netd := always
	netd.get("/api/connectivity/wifi/status", h.wifiStatus)
	netd.get("/api/connectivity/wifi/adapters", h.wifiAdapters)
	netd.get("/api/connectivity/wifi", h.wifiScan)
	netd.post("/api/connectivity/wifi/connect", h.wifiConnect)
	netd.get("/api/connectivity/wifi/networks", h.wifiNetworks)
	netd.post("/api/connectivity/wifi/forget", h.wifiForget)
	netd.put("/api/connectivity/wifi/country", h.wifiCountry)

	// Home automation: the parent pairs and revokes clients here; the API
	// itself is on the TLS port, and its paths are refused here (Refused),
	// so no token or code ever travels in clear.
	ha := h.part(r, h.HA != nil, errNoHA)
	ha.get("/api/admin/ha", h.haStatus)
	ha.post("/api/admin/ha/pairing", h.haEnable)
	ha.delete("/api/admin/ha/pairing", h.haCancel)
	ha.delete("/api/admin/ha/clients/{client_id}", h.haRevoke)
	for prefix, answer := range h.Refused {
		r.PathPrefix(prefix).Handler(answer)
	}

	// Cards and buttons. The fixed paths come before /cards/{id}, which
	// would take them as ids (and refuse them: ids are digits and capitals).
	cards := h.part(r, h.Cards != nil, errNoCards)
	cards.get("/api/admin/cards", h.getCards)
	cards.put("/api/admin/cards", h.putCards)
	cards.get("/api/admin/cards/unknown", h.unknownCards)
	cards.delete("/api/admin/cards/unknown/{id}", h.forgetUnknownCard)
	cards.get("/api/admin/cards/reads", h.cardReads)
	cards.post("/api/admin/cards/learn", h.startLearn)
	cards.get("/api/admin/cards/learn", h.learning)
	cards.delete("/api/admin/cards/learn", h.stopLearn)
	cards.put("/api/admin/cards/{id}", h.putCard)
	cards.delete("/api/admin/cards/{id}", h.deleteCard)
	input := h.part(r, h.Input != nil, errNoInput)
	input.get("/api/admin/input", h.getInput)
	input.put("/api/admin/input", h.putInput)
	radio := h.part(r, h.Radio != nil, errNoRadio)
	radio.get("/api/admin/stations", h.listStations)
	radio.post("/api/admin/stations", h.addStation)
	radio.put("/api/admin/stations/{id}", h.updateStation)
	radio.delete("/api/admin/stations/{id}", h.deleteStation)
	radio.get("/api/admin/podcasts", h.listPodcasts)
	radio.post("/api/admin/podcasts", h.addPodcast)
	radio.put("/api/admin/podcasts/{id}", h.updatePodcast)
	radio.delete("/api/admin/podcasts/{id}", h.deletePodcast)
	radio.post("/api/admin/podcasts/{id}/refresh", h.refreshPodcast)
	parental := h.part(r, h.Parental != nil, errNoParental)
	parental.get("/api/admin/parental", h.parental)
	parental.put("/api/admin/parental", h.setParental)

	// The parents' admin page: static files, open to read (what they do
	// needs a session through the API above), with a CSP of their own.
	r.PathPrefix(adminui.Prefix).Handler(adminui.Handler(h.surface.NotFound)).Methods(http.MethodGet, http.MethodHead)
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
