package main

import (
	"time"

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

// saveError is GET /api/info's save_error: null while the player state is
// saved, else why the last write failed and since when. Changes still take
// effect while saving fails (the child keeps listening); they are lost at
// the next power cut, which is what this tells a parent or an admin page.
func (a *app) saveError() any {
	since, err := a.saver.Err()
	if err == nil {
		return nil
	}
	return map[string]any{"message": fault.Message(err), "since": since.UTC().Format(time.RFC3339)}
}
