// Package server serves hatd's status as HTTP+JSON on a Unix socket.
//
//	GET  /status  the status object (see package status)
//	GET  /sim     the simulation's state (only with -sim)
//	POST /sim     change the simulation: {"soc","load_ma","external_power","speed","advance_s"}
//
// Errors are {"error","kind"} with the status of the fault kind
// (daemon.ErrorBody), an unknown path or method included.
package server

import (
	"log/slog"
	"net/http"

	"github.com/storybox/storybox/services/hatd/internal/sim"
	"github.com/storybox/storybox/services/hatd/internal/status"
	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/daemon"
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
	s := daemon.Socket(d.Log)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		answer.JSON(w, http.StatusOK, d.Status())
	})
	if d.Sim != nil {
		mux.HandleFunc("GET /sim", func(w http.ResponseWriter, r *http.Request) {
			answer.JSON(w, http.StatusOK, d.Sim.State())
		})
		mux.HandleFunc("POST /sim", func(w http.ResponseWriter, r *http.Request) {
			var c sim.Control
			err := s.Decode(r, &c)
			if err == nil {
				err = d.Sim.Apply(c)
			}
			if err != nil {
				s.Fail(w, r, err)
				return
			}
			d.Log.Info("simulation changed", "state", d.Sim.State())
			answer.JSON(w, http.StatusOK, d.Sim.State())
		})
	}
	return daemon.Handler(s, mux)
}
