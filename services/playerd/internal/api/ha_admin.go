package api

import (
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
)

// HomeAutomation is the parent's side of the home-automation API (which
// itself is served over TLS on :8443 only): its key fingerprint, opening
// the pairing window, and the paired clients.
type HomeAutomation interface {
	Status() (any, error)
	Enable(scopes []string) (any, error)
	Cancel() error
	Revoke(clientID string) error
}

// haStatus is GET /api/admin/ha.
func (h *handler) haStatus(w http.ResponseWriter, r *http.Request) {
	st, err := h.HA.Status()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, st)
}

type haEnableRequest struct {
	Scopes []string `json:"scopes"`
}

// haEnable is POST /api/admin/ha/pairing: open the window in which one
// client may start pairing, for the scopes named (default read, control).
func (h *handler) haEnable(w http.ResponseWriter, r *http.Request) {
	var req haEnableRequest
	if r.ContentLength != 0 {
		if err := jsonBody.Decode(r, &req); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	res, err := h.HA.Enable(req.Scopes)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("home-automation pairing window opened", "scopes", req.Scopes)
	answer.JSON(w, http.StatusOK, res)
}

// haCancel is DELETE /api/admin/ha/pairing: close the window and void a
// pending pairing.
func (h *handler) haCancel(w http.ResponseWriter, r *http.Request) {
	if err := h.HA.Cancel(); err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, map[string]bool{"success": true})
}

// haRevoke is DELETE /api/admin/ha/clients/{client_id}.
func (h *handler) haRevoke(w http.ResponseWriter, r *http.Request) {
	id := pathVar(r, "client_id")
	if err := h.HA.Revoke(id); err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("home-automation client revoked", "client_id", id)
	answer.JSON(w, http.StatusOK, map[string]bool{"success": true})
}
