package hhlink

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/syncapi"
)

// Synced is what the box does after Syncthing changed one of its folders.
type Synced struct {
	// Household reconciles the household folder: conflict files resolved
	// by the rule, the cards and catalog read again.
	Household func(context.Context)
	// Media scans the library again: a track appears once it is complete,
	// as Syncthing writes it under a temporary name and renames it last.
	Media func(context.Context)
}

// RescanPause is the least time between two runs of a Synced handler: a
// large library arriving file by file is scanned every few seconds, not
// once per file.
const RescanPause = 5 * time.Second

// Supervise follows syncd's changes under sup and runs on's handler for
// each folder that changed, at most every RescanPause.
func (l *Link) Supervise(ctx context.Context, sup *daemon.Group, on Synced) {
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
	sup.Restarting(ctx, "household reconcile", paced(shared, on.Household))
	sup.Restarting(ctx, "household rescans", paced(media, on.Media))
}

// paced runs do after each poke on c, at most every RescanPause.
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
			case <-time.After(RescanPause):
			}
		}
	}
}

// Follow calls changed with the folder of every change syncd reports,
// until ctx ends: playerd reconciles the household folder and rescans the
// library. After syncd started again, and whenever events were lost, it
// calls changed for every folder.
func (l *Link) Follow(ctx context.Context, changed func(folder string)) error {
	var since int64
	for ctx.Err() == nil {
		var evs syncapi.Events
		cctx, cancel := context.WithTimeout(ctx, 40*time.Second)
		err := l.d.Call(cctx, http.MethodGet, fmt.Sprintf("/events?since=%d&wait=30s", since), nil, &evs)
		cancel()
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
			continue
		}
		if evs.Last < since || (len(evs.Events) > 0 && evs.Events[0].ID > since+1) {
			changed(syncapi.HouseholdFolder)
			changed(syncapi.MediaFolder)
		}
		seen := map[string]bool{}
		for _, ev := range evs.Events {
			if ev.Type == syncapi.EventFolderChanged && !seen[ev.Folder] {
				seen[ev.Folder] = true
				changed(ev.Folder)
			}
		}
		since = evs.Last
	}
	return nil
}

// Announced are the TXT keys of this box's _mupibox._tcp record that let
// the other boxes add it; none while syncd does not answer.
func (l *Link) Announced(ctx context.Context, apiPort int) map[string]string {
	st, err := l.Status(ctx)
	if err != nil {
		return nil
	}
	return map[string]string{syncapi.TXTDeviceID: st.DeviceID, syncapi.TXTPort: strconv.Itoa(st.Port), syncapi.TXTAPIPort: strconv.Itoa(apiPort)}
}

// TXT adds the household's keys to a _mupibox._tcp record whose API
// listens on listen, once syncd answers; nil until then.
func (l *Link) TXT(listen string) func(ctx context.Context, base map[string]string) map[string]string {
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
