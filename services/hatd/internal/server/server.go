// Package server serves hatd's status as HTTP+JSON on a Unix socket.
//
//	GET  /status  the status object (see package status)
//	GET  /sim     the simulation's state (only with -sim)
//	POST /sim     change the simulation: {"soc","load_ma","external_power","speed","advance_s"}
package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/storybox/storybox/services/hatd/internal/sim"
	"github.com/storybox/storybox/services/hatd/internal/status"
)

// Deps are what the handler serves.
type Deps struct {
	Status func() status.Status
	// Sim is nil unless hatd runs the simulated board.
	Sim *sim.Board
	Log *slog.Logger
}

// NewHandler returns the routes.
func NewHandler(d Deps) http.Handler {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, d.Status())
	})
	if d.Sim != nil {
		mux.HandleFunc("GET /sim", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, d.Sim.State())
		})
		mux.HandleFunc("POST /sim", func(w http.ResponseWriter, r *http.Request) {
			var c sim.Control
			if err := decode(r, &c); err != nil {
				writeError(w, http.StatusBadRequest, err.Error())
				return
			}
			if err := d.Sim.Apply(c); err != nil {
				writeError(w, http.StatusBadRequest, err.Error())
				return
			}
			d.Log.Info("simulation changed", "state", d.Sim.State())
			writeJSON(w, http.StatusOK, d.Sim.State())
		})
	}
	return mux
}

func decode(r *http.Request, v any) error {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return errors.New("Content-Type must be application/json")
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("expected one JSON object")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// Listen creates the socket's directory, removes a stale socket left by a
// previous run and listens on path.
func Listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another hatd is serving", path)
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
