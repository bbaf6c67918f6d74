package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/storybox/storybox/services/playerd/internal/display"
)

// Display is what the API needs of the touch screen.
type Display interface {
	ShowMessage(display.MessageRequest) (display.Message, error)
	ActiveMessage() *display.Message
	UIState() display.UIState
	Screenshot(ctx context.Context) ([]byte, error)
}

// message is POST /api/message. A bad body is refused even when no display
// runs; the rules are the display's own (display.MessageRequest.Check).
func (h *handler) message(w http.ResponseWriter, r *http.Request) {
	var req display.MessageRequest
	if err := decodeBody(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if err := req.Check(); err != nil {
		h.fail(w, r, err)
		return
	}
	if h.Display == nil {
		h.fail(w, r, errNoDisplay)
		return
	}
	m, err := h.Display.ShowMessage(req)
	if err != nil {
		h.fail(w, r, failed("message could not be shown", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": m})
}

// activeMessage is GET /api/message: the message on screen, or null.
func (h *handler) activeMessage(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.Display.ActiveMessage())
}

// uiState is GET /api/ui-state: the screen, the message and the battery
// banner, so other clients can mirror the box.
func (h *handler) uiState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.Display.UIState())
}

// screenshot is GET /api/display/screenshot: a PNG of what the screen shows.
func (h *handler) screenshot(w http.ResponseWriter, r *http.Request) {
	png, err := h.Display.Screenshot(r.Context())
	if err != nil {
		h.fail(w, r, failed("screenshot failed", err))
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(png)
}
