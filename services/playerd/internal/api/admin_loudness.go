package api

import (
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
)

// getLoudness is GET /api/admin/loudness: "measured N of M", the
// background measurement of the library's loudness.
func (h *handler) getLoudness(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Views.Loudness())
}
