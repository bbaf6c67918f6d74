package api

import (
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// SettingsAdmin is the settings document: Put validates, saves and applies
// it, all or nothing.
type SettingsAdmin interface {
	Get() settings.Settings
	Put(settings.Settings) error
}

// NavigationAdmin is the home screen's navigation: Navigation is what the
// screen uses (the parent's, or the one derived from the library); Put
// validates, saves and applies it.
type NavigationAdmin interface {
	Navigation() *home.Config
	PutNavigation(*home.Config) error
}

func (h *handler) getSettings(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Settings.Get())
}

// putSettings is PUT /api/admin/settings. The body has the document's
// shape; fields it leaves out keep their current values (objects merge
// field by field, lists are replaced). The result is checked and saved as a
// whole, or refused as a whole.
func (h *handler) putSettings(w http.ResponseWriter, r *http.Request) {
	s := h.Settings.Get()
	if err := jsonBody.Decode(r, &s); err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.Settings.Put(s); err != nil {
		h.fail(w, r, err)
		return
	}
	// Every setting takes effect at once, so nothing waits for a restart;
	// the field is the real box's.
	answer.JSON(w, http.StatusOK, map[string]any{"settings": h.Settings.Get(), "restart_required": []string{}})
}

func (h *handler) getNavigation(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Navigation.Navigation())
}

// putNavigation is PUT /api/admin/navigation: the whole navigation
// replaces the old one.
func (h *handler) putNavigation(w http.ResponseWriter, r *http.Request) {
	c := home.Config{Version: home.Version}
	if err := jsonBody.Decode(r, &c); err != nil {
		h.fail(w, r, err)
		return
	}
	if c.Categories == nil {
		h.fail(w, r, badRequest("categories is required"))
		return
	}
	if err := h.Navigation.PutNavigation(&c); err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, h.Navigation.Navigation())
}

// getResume is GET /api/admin/resume: where each folder was left.
func (h *handler) getResume(w http.ResponseWriter, r *http.Request) {
	resume := h.Views.Resume()
	if resume == nil {
		resume = map[string]state.ResumePoint{}
	}
	answer.JSON(w, http.StatusOK, resume)
}
