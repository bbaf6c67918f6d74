package api

import (
	"context"
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/netapi"
)

// Connectivity is the network daemon (netd) as the API reaches it. The
// guard protects its routes by their /api/connectivity/ prefix.
type Connectivity interface {
	Status(ctx context.Context) (netapi.Status, error)
	Adapters(ctx context.Context) (netapi.Adapters, error)
	Scan(ctx context.Context, iface string) (netapi.Scan, error)
	Connect(ctx context.Context, req netapi.Connect) (netapi.Connected, error)
	Known(ctx context.Context) (netapi.Known, error)
	Forget(ctx context.Context, ssid string) error
	SetCountry(ctx context.Context, country string) (netapi.Country, error)
}

// netd answers with v from the network daemon, or its error; without one,
// that there is none, after the request itself was checked.
func (h *handler) netd(w http.ResponseWriter, r *http.Request, call func(Connectivity) (any, error)) {
	if h.Net == nil {
		h.fail(w, r, errNoNetd)
		return
	}
	v, err := call(h.Net)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, v)
}

func (h *handler) wifiStatus(w http.ResponseWriter, r *http.Request) {
	h.netd(w, r, func(n Connectivity) (any, error) { return n.Status(r.Context()) })
}

func (h *handler) wifiAdapters(w http.ResponseWriter, r *http.Request) {
	h.netd(w, r, func(n Connectivity) (any, error) { return n.Adapters(r.Context()) })
}

func (h *handler) wifiScan(w http.ResponseWriter, r *http.Request) {
	h.netd(w, r, func(n Connectivity) (any, error) { return n.Scan(r.Context(), r.URL.Query().Get("interface")) })
}

func (h *handler) wifiNetworks(w http.ResponseWriter, r *http.Request) {
	h.netd(w, r, func(n Connectivity) (any, error) { return n.Known(r.Context()) })
}

// wifiConnect joins a network. The body carries a passphrase: it goes to
// netd and nowhere else (fail logs only failures of the box, whose
// messages never quote a request).
func (h *handler) wifiConnect(w http.ResponseWriter, r *http.Request) {
	var req netapi.Connect
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	h.netd(w, r, func(n Connectivity) (any, error) { return n.Connect(r.Context(), req) })
}

func (h *handler) wifiForget(w http.ResponseWriter, r *http.Request) {
	var req netapi.Forget
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	h.netd(w, r, func(n Connectivity) (any, error) {
		return map[string]bool{"forgotten": true}, n.Forget(r.Context(), req.SSID)
	})
}

func (h *handler) wifiCountry(w http.ResponseWriter, r *http.Request) {
	var req netapi.Country
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	h.netd(w, r, func(n Connectivity) (any, error) { return n.SetCountry(r.Context(), req.Country) })
}
