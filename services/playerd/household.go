package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/playerd/internal/box"
	"github.com/storybox/storybox/services/playerd/internal/hhlink"
)

// openHousehold is the household of boxes through syncd (-sync); nil
// without it, which the log says once: the box then shares nothing.
func openHousehold(cfg Config, core *box.Box, host string, log *slog.Logger) *hhlink.Link {
	if cfg.Sync == "" {
		log.Info("household: no sync service (-sync), so this box shares nothing with other boxes")
		return nil
	}
	return hhlink.New(hhlink.Config{Socket: cfg.Sync, Name: host, OnChange: core.HouseholdChanged})
}

// followHousehold hands what Syncthing changed on this box to the core,
// and logs what went wrong.
func followHousehold(ctx context.Context, sup *daemon.Group, l *hhlink.Link, core *box.Box, log *slog.Logger) {
	l.Supervise(ctx, sup, hhlink.Synced{
		Household: func(context.Context) {
			rep, err := core.Reconcile()
			if err != nil {
				log.Warn("household folder after a sync", "error", err)
			}
			if rep.Ahead > 0 {
				log.Warn("household: entries stamped ahead of this box's clock; the clock of the box that wrote them, or this one's, is wrong",
					"entries", rep.Ahead, "ahead_by", rep.AheadBy.Round(time.Second))
			}
		},
		Media: func(ctx context.Context) {
			if err := core.MediaSynced(ctx); err != nil {
				log.Warn("library after a sync", "error", err)
			}
		},
	})
}
