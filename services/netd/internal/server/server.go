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
//
// Errors are {"error","kind"} with the status of the kind. Nothing here
// logs a request body: one of them carries a passphrase.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

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

// NewHandler returns the routes.
func NewHandler(st Station, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &handler{st: st, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, st.Status()) })
	mux.HandleFunc("GET /adapters", func(w http.ResponseWriter, r *http.Request) {
		a, err := st.Adapters(r.Context())
		h.answer(w, r, a, err)
	})
	mux.HandleFunc("GET /scan", func(w http.ResponseWriter, r *http.Request) {
		s, err := st.Scan(r.Context(), r.URL.Query().Get("interface"))
		h.answer(w, r, s, err)
	})
	mux.HandleFunc("POST /connect", func(w http.ResponseWriter, r *http.Request) {
		var req netapi.Connect
		if err := decode(r, &req); err != nil {
			h.fail(w, r, err)
			return
		}
		if err := st.Connect(r.Context(), req); err != nil {
			h.fail(w, r, err)
			return
		}
		status := st.Status()
		writeJSON(w, http.StatusOK, netapi.Connected{Connected: true, SSID: req.SSID, Interface: status.Interface})
	})
	mux.HandleFunc("GET /networks", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, st.Known()) })
	mux.HandleFunc("POST /forget", func(w http.ResponseWriter, r *http.Request) {
		var req netapi.Forget
		if err := decode(r, &req); err != nil {
			h.fail(w, r, err)
			return
		}
		h.answer(w, r, map[string]bool{"forgotten": true}, st.Forget(r.Context(), req.SSID))
	})
	mux.HandleFunc("GET /country", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, netapi.Country{Country: st.Status().Country})
	})
	mux.HandleFunc("PUT /country", func(w http.ResponseWriter, r *http.Request) {
		var req netapi.Country
		if err := decode(r, &req); err != nil {
			h.fail(w, r, err)
			return
		}
		h.answer(w, r, req, st.SetCountry(r.Context(), req.Country))
	})
	return mux
}

type handler struct {
	st  Station
	log *slog.Logger
}

func (h *handler) answer(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// fail logs failures of the box with their cause (never a body) and
// answers with the kind, so playerd can keep it.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	k := fault.KindOf(err)
	if k == fault.Internal || k == fault.Upstream || k == fault.Unavailable {
		h.log.Warn("request failed", "path", r.URL.Path, "err", err)
	}
	writeJSON(w, fault.HTTPStatus(k), netapi.Error{Error: fault.Message(err), Kind: string(k)})
}

func decode(r *http.Request, v any) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return fault.New(fault.Unsupported, "Content-Type must be application/json")
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// The decoder's message may quote the body; say only what kind
		// of mistake it is.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fault.New(fault.Invalid, "field %q has the wrong type", te.Field)
		}
		return fault.New(fault.Invalid, "body must be one JSON object with known fields")
	}
	if dec.More() {
		return fault.New(fault.Invalid, "expected one JSON object")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Listen creates the socket's directory, removes a stale socket left by a
// previous run and listens on path, for root and its group only.
func Listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another netd is serving", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		l.Close()
		return nil, fmt.Errorf("socket permissions: %w", err)
	}
	return l, nil
}
