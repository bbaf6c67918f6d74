package api

import (
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// Parental is the parent's rules behind GET and PUT /api/admin/parental.
type Parental interface {
	Rules() rules.Rules
	// SetRules checks r completely, saves it atomically and puts it in
	// force, or changes nothing; it returns the rules as saved.
	SetRules(r rules.Rules) (rules.Rules, error)
}

func (h *handler) parental(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Parental.Rules())
}

// setParental replaces the whole document: a field left out is emptied,
// so what the parent sees after a PUT is exactly what was sent.
func (h *handler) setParental(w http.ResponseWriter, r *http.Request) {
	var req rules.Rules
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	saved, err := h.Parental.SetRules(req)
	if err != nil {
		h.fail(w, r, answer.Failed("parental rules not saved", err))
		return
	}
	answer.JSON(w, http.StatusOK, saved)
}
