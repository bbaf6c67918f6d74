package api

import (
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/sysinfo"
)

// SystemAdmin is the machine: what it is, and its power.
type SystemAdmin interface {
	Info() sysinfo.Info
	// Power schedules a power-off or restart after the state is saved;
	// dryRun reports a development machine, where it is only logged.
	Power(a power.Action) (dryRun bool, err error)
}

func (h *handler) adminSystem(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.SystemAdmin.Info())
}

// power is POST /api/admin/system/power {"action":"reboot"|"poweroff"}:
// 202 once scheduled; the answer is sent before the box goes down.
func (h *handler) power(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Action string `json:"action"`
	}
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	a, err := power.ParseAction(req.Action)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	dry, err := h.SystemAdmin.Power(a)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusAccepted, map[string]any{"scheduled": true, "action": a, "dry_run": dry})
}
