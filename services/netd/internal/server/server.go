// Package server serves netd on its Unix socket as HTTP+JSON, for playerd
// to pass on under /api/connectivity/ (shapes: package netapi).
//
//	GET  /status            the Wi-Fi state now
//	GET  /adapters          the Wi-Fi adapters
//	GET  /scan?interface=   scan (409 without a usable adapter, 503 when the scan fails)
//	POST /connect           join a network and keep it {ssid,password,interface,priority}
//	GET  /networks          the known networks (names and priorities only)
//	POST /forget            forget a known network {ssid}
//	GET  /country, PUT /country  the regulatory country {country}
//	GET  /mdns              what the mDNS responder announces
//	PUT  /mdns/services     announce a service for another program {name,type,port,text},
//	                        in place of one of its type (409 with -mdns=false)
//	DELETE /mdns/services/{type}  stop announcing it
//
// Errors are {"error","kind"} with the status of the kind
// (daemon.ErrorBody), an unknown path or method included. Nothing here logs a request body: one of them carries
// a passphrase.
package server

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
)

// Station is what the server serves.
type Station interface {
	Status() netapi.Status
	Adapters(ctx context.Context) (netapi.Adapters, error)
	Scan(ctx context.Context, iface string) (netapi.Scan, error)
	Connect(ctx context.Context, req netapi.Connect) error
	Known() netapi.Known
	Forget(ctx context.Context, ssid string) error
	SetCountry(ctx context.Context, country string) error
}

// Announcer is the mDNS responder; nil with -mdns=false.
type Announcer interface {
	Announce(s netapi.Service) error
	Withdraw(typ string) error
	State() netapi.MDNS
}

// errMDNSOff answers announcements while netd announces nothing.
var errMDNSOff = fault.New(fault.Conflict, "mDNS is off on this box (netd -mdns=false)")

// NewHandler returns the routes; ann is nil when netd announces nothing.
func NewHandler(st Station, ann Announcer, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sock := daemon.Socket(log)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { answer.JSON(w, http.StatusOK, st.Status()) })
	mux.HandleFunc("GET /adapters", func(w http.ResponseWriter, r *http.Request) {
		a, err := st.Adapters(r.Context())
		sock.Answer(w, r, a, err)
	})
	mux.HandleFunc("GET /scan", func(w http.ResponseWriter, r *http.Request) {
		s, err := st.Scan(r.Context(), r.URL.Query().Get("interface"))
		sock.Answer(w, r, s, err)
	})
	mux.HandleFunc("POST /connect", func(w http.ResponseWriter, r *http.Request) {
		var req netapi.Connect
		err := sock.Decode(r, &req)
		if err == nil {
			err = st.Connect(r.Context(), req)
		}
		if err != nil {
			sock.Fail(w, r, err)
			return
		}
		status := st.Status()
		answer.JSON(w, http.StatusOK, netapi.Connected{Connected: true, SSID: req.SSID, Interface: status.Interface})
	})
	mux.HandleFunc("GET /networks", func(w http.ResponseWriter, r *http.Request) { answer.JSON(w, http.StatusOK, st.Known()) })
	mux.HandleFunc("POST /forget", func(w http.ResponseWriter, r *http.Request) {
		var req netapi.Forget
		err := sock.Decode(r, &req)
		if err == nil {
			err = st.Forget(r.Context(), req.SSID)
		}
		sock.Answer(w, r, map[string]bool{"forgotten": true}, err)
	})
	mux.HandleFunc("GET /country", func(w http.ResponseWriter, r *http.Request) {
		answer.JSON(w, http.StatusOK, netapi.Country{Country: st.Status().Country})
	})
	mux.HandleFunc("PUT /country", func(w http.ResponseWriter, r *http.Request) {
		var req netapi.Country
		err := sock.Decode(r, &req)
		if err == nil {
			err = st.SetCountry(r.Context(), req.Country)
		}
		sock.Answer(w, r, req, err)
	})
	mux.HandleFunc("GET /mdns", func(w http.ResponseWriter, r *http.Request) {
		state := netapi.MDNS{Addresses: []string{}, Services: []netapi.Service{}}
		if ann != nil {
			state = ann.State()
		}
		answer.JSON(w, http.StatusOK, state)
	})
	mux.HandleFunc("PUT /mdns/services", func(w http.ResponseWriter, r *http.Request) {
		var req netapi.Service
		err := sock.Decode(r, &req)
		if err == nil && ann == nil {
			err = errMDNSOff
		}
		if err == nil {
			err = ann.Announce(req)
		}
		sock.Answer(w, r, req, err)
	})
	mux.HandleFunc("DELETE /mdns/services/{type}", func(w http.ResponseWriter, r *http.Request) {
		var err error = errMDNSOff
		if ann != nil {
			err = ann.Withdraw(r.PathValue("type"))
		}
		sock.Answer(w, r, map[string]bool{"withdrawn": true}, err)
	})
	return daemon.Handler(sock, mux)
}
