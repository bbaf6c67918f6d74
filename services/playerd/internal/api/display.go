package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/onscreen"
)

// Display is what the API needs of the touch screen: the core's facet of
// it (box.Screen), never the screen itself.
type Display interface {
	ShowMessage(message.Request) (message.Message, error)
	ActiveMessage() *message.Message
	UIState() onscreen.UIState
	Screenshot(ctx context.Context) ([]byte, error)
}

// message is POST /api/message (package message): the answer carries the
// message as shown.
func (h *handler) message(w http.ResponseWriter, r *http.Request) {
	message.Handler(&h.surface, h.Display, func(m message.Message) any {
		return map[string]any{"success": true, "message": m}
	})(w, r)
}

// activeMessage is GET /api/message: the message on screen, or null.
func (h *handler) activeMessage(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Display.ActiveMessage())
}

// uiState is GET /api/ui-state: the screen, the message and the battery
// banner, so other clients can mirror the box.
func (h *handler) uiState(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Display.UIState())
}

// screenshot is GET /api/display/screenshot: a PNG of what the screen shows.
func (h *handler) screenshot(w http.ResponseWriter, r *http.Request) {
	png, err := h.Display.Screenshot(r.Context())
	if err != nil {
		h.fail(w, r, answer.Failed("screenshot failed", err))
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(png)
}
