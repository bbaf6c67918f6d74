package main

import (
	"github.com/storybox/storybox/services/internal/fault"
)

// reportSave logs the start and the end of an episode of failing state
// writes, once each; retries in between stay quiet.
func (a *app) reportSave(err error) {
	if err != nil {
		a.log.Error("state", "error", err)
	} else {
		a.log.Info("player state saved again")
	}
}

// storage is GET /api/info's storage: whether the newest player state is
// on disk, and if not why and since when. Changes still take effect while
// saving fails (the child keeps listening); they are lost at the next power
// cut, which is what this tells a parent or an admin page.
func (a *app) storage() map[string]any {
	since, err := a.saver.Err()
	if err == nil {
		return map[string]any{"ok": true, "error": nil, "since": nil}
	}
	return map[string]any{"ok": false, "error": fault.Message(err), "since": since.UTC()}
}
