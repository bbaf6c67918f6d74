package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is the one error shape of the API.
type errorBody struct {
	Error string `json:"error"`
}

// writeError is the only place that writes an error response. Server-side
// failures are logged; client errors and 503 (a part that is down, which a
// poller would otherwise repeat into gokrazy's 100 log lines) are not.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if status >= 500 && status != http.StatusServiceUnavailable && h.log != nil {
		h.log.Error("request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status), slog.String("error", msg))
	}
	writeJSON(w, status, errorBody{Error: msg})
}

// fail maps an error from the layers below to its status.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var re *requestError
	switch {
	case errors.As(err, &re):
		status = re.status
	case errors.Is(err, player.ErrInvalid):
		status = http.StatusBadRequest
	case errors.Is(err, player.ErrConflict):
		status = http.StatusConflict
	case errors.Is(err, player.ErrClosed), errors.Is(err, player.ErrBusy), errors.Is(err, errUnavailable):
		status = http.StatusServiceUnavailable
	case errors.Is(err, library.ErrNotFound):
		status = http.StatusNotFound
	}
	h.writeError(w, r, status, err.Error())
}

// errUnavailable marks a part of the box that is not running (503).
var errUnavailable = errors.New("unavailable")
