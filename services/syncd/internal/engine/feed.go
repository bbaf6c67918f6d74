package engine

import (
	"context"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/syncapi"
)

// feedSize is how many events the feed keeps for a reader that fell
// behind; one further behind is told to take everything as changed
// (syncapi.Events).
const feedSize = 1024

// Feed is the change stream syncd serves: Syncthing's events of the kinds
// playerd acts on, numbered by syncd (Syncthing numbers anew at each of its
// starts).
type Feed struct {
	mu     sync.Mutex
	events []syncapi.Event
	last   int64
	more   chan struct{} // closed and replaced on every append
}

// NewFeed returns an empty feed.
func NewFeed() *Feed { return &Feed{more: make(chan struct{})} }

func (f *Feed) add(ev syncapi.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last++
	ev.ID = f.last
	f.events = append(f.events, ev)
	if len(f.events) > feedSize {
		f.events = f.events[len(f.events)-feedSize:]
	}
	close(f.more)
	f.more = make(chan struct{})
}

// After returns the events after since, waiting up to wait for one. A
// since beyond the last (syncd started again) is answered at once with
// Last below it.
func (f *Feed) After(ctx context.Context, since int64, wait time.Duration) syncapi.Events {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		f.mu.Lock()
		out := syncapi.Events{Last: f.last, Events: []syncapi.Event{}}
		for _, ev := range f.events {
			if ev.ID > since {
				out.Events = append(out.Events, ev)
			}
		}
		more := f.more
		f.mu.Unlock()
		if len(out.Events) > 0 || since > out.Last {
			return out
		}
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
			return out
		case <-more:
		}
	}
}

// Follow passes Syncthing's events on to feed while Syncthing runs, until
// ctx ends.
func (e *Engine) Follow(ctx context.Context, feed *Feed) error {
	var since int64
	starts := -1
	for ctx.Err() == nil {
		state, _ := e.State()
		if state != syncapi.StateRunning {
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		if n := e.Starts(); n != starts {
			// A new process numbers its events from 1 again.
			starts, since = n, 0
		}
		evs, err := e.Client.events(ctx, since, 30*time.Second)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for _, ev := range evs {
			since = max(since, ev.ID)
			switch ev.Type {
			case "ItemFinished":
				if ev.Data.Error == nil || *ev.Data.Error == "" {
					feed.add(syncapi.Event{Type: syncapi.EventFolderChanged, Folder: ev.Data.Folder, Item: ev.Data.Item})
				}
			case "LocalIndexUpdated":
				item := ""
				if len(ev.Data.Filenames) == 1 {
					item = ev.Data.Filenames[0]
				}
				feed.add(syncapi.Event{Type: syncapi.EventFolderChanged, Folder: ev.Data.Folder, Item: item})
			case "FolderCompletion":
				feed.add(syncapi.Event{Type: syncapi.EventFolderComplete, Folder: ev.Data.Folder})
			}
		}
	}
	return nil
}
