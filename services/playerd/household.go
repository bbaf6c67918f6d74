package main

import (
	"context"
	"log/slog"
	"maps"
	"net"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/syncapi"
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

// rescanPause is the least time between two library scans caused by
// Syncthing: a large library arriving file by file is scanned every few
// seconds, not once per file.
const rescanPause = 5 * time.Second

// followHousehold acts on what Syncthing changed on this box: the
// household folder is reconciled (conflict files resolved by the rule, the
// cards and catalog read again) and the library is scanned again (a track
// appears once it is complete: Syncthing writes it under a temporary name
// and renames it at the end), each at most every rescanPause.
func followHousehold(ctx context.Context, sup *daemon.Group, l *hhlink.Link, core *box.Box, log *slog.Logger) {
	media, shared := make(chan struct{}, 1), make(chan struct{}, 1)
	poke := func(c chan struct{}) {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	sup.Restarting(ctx, "household changes", func(ctx context.Context) error {
		return l.Follow(ctx, func(folder string) {
			switch folder {
			case syncapi.MediaFolder:
				poke(media)
			case syncapi.HouseholdFolder:
				poke(shared)
			}
		})
	})
	sup.Restarting(ctx, "household reconcile", paced(shared, func(ctx context.Context) {
		rep, err := core.Reconcile()
		if err != nil {
			log.Warn("household folder after a sync", "error", err)
		}
		if rep.Ahead > 0 {
			log.Warn("household: entries stamped ahead of this box's clock; the clock of the box that wrote them, or this one's, is wrong",
				"entries", rep.Ahead, "ahead_by", rep.AheadBy.Round(time.Second))
		}
	}))
	sup.Restarting(ctx, "household rescans", paced(media, func(ctx context.Context) {
		if err := core.MediaSynced(ctx); err != nil {
			log.Warn("library after a sync", "error", err)
		}
	}))
}

// paced runs do after each poke on c, at most every rescanPause.
func paced(c <-chan struct{}, do func(context.Context)) func(context.Context) error {
	return func(ctx context.Context) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-c:
			}
			do(ctx)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(rescanPause):
			}
		}
	}
}

// householdTXT adds the household's keys to the _mupibox._tcp record,
// once syncd answers.
func householdTXT(l *hhlink.Link, listen string) func(ctx context.Context, base map[string]string) map[string]string {
	_, p, _ := net.SplitHostPort(listen)
	port, _ := strconv.Atoi(p)
	return func(ctx context.Context, base map[string]string) map[string]string {
		extra := l.Announced(ctx, port)
		if extra == nil {
			return nil
		}
		out := maps.Clone(base)
		maps.Copy(out, extra)
		return out
	}
}
