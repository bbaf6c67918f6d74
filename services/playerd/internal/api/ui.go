package api

import "net/http"

// ScreenRestarts take a parent's request to restart the touch screen to
// the part of playerd that runs it. The API only asks: it never holds the
// screen.
type ScreenRestarts interface {
	// RestartScreen asks for the framebuffer and the touch panel to be
	// opened anew and the screen drawn again, and returns the request's
	// generation: 1 for the first since playerd started. The restart
	// follows beside the answer; requests that arrive while one is under
	// way are served by one more restart.
	RestartScreen() uint64
}

// restartUI is POST /api/admin/ui/restart, body {}: 202 with the
// request's generation, as the real box answers (Home Assistant's "Restart
// UI" button).
func (h *handler) restartUI(w http.ResponseWriter, r *http.Request) {
	if err := decodeBody(r, &struct{}{}); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]uint64{"restart_generation": h.UIRestart.RestartScreen()})
}
