package api

import (
	"io"
	"net/http"
	"strconv"

	"github.com/storybox/storybox"
)

// licenses is GET /api/licenses: NOTICE.md as this playerd was built with
// it, storybox's licence and every third-party component of the image with
// its licence. It is open to everyone on the network: the licences ask that
// whoever has the box can read them.
func (h *handler) licenses(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(storybox.Notice)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, storybox.Notice)
	}
}
