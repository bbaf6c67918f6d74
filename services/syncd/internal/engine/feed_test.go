package engine

import (
	"context"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/syncapi"
)

// A reader waiting for events is woken by the next; one asking beyond the
// last (syncd started again) is answered at once; the feed keeps the last
// feedSize events only.
func TestFeed(t *testing.T) {
	f := NewFeed()
	got := make(chan syncapi.Events, 1)
	go func() { got <- f.After(context.Background(), 0, time.Minute) }()
	f.add(syncapi.Event{Type: syncapi.EventFolderChanged, Folder: syncapi.MediaFolder, Item: "a.mp3"})
	ev := <-got
	if ev.Last != 1 || len(ev.Events) != 1 || ev.Events[0].Item != "a.mp3" || ev.Events[0].ID != 1 {
		t.Fatalf("%+v", ev)
	}
	if ev := f.After(context.Background(), 7, time.Minute); ev.Last != 1 || len(ev.Events) != 0 {
		t.Fatalf("beyond the last: %+v", ev)
	}
	if ev := f.After(context.Background(), 1, time.Millisecond); len(ev.Events) != 0 {
		t.Fatalf("nothing new: %+v", ev)
	}
	for range feedSize + 10 {
		f.add(syncapi.Event{Type: syncapi.EventFolderChanged})
	}
	if ev := f.After(context.Background(), 0, 0); len(ev.Events) != feedSize || ev.Events[0].ID != 12 {
		t.Fatalf("kept %d from %d", len(ev.Events), ev.Events[0].ID)
	}
}

func TestMediaIgnore(t *testing.T) {
	if got := MediaIgnore(syncapi.Media{All: true}); len(got) != 2 || got[1] != "(?d)*.sync-conflict-*" {
		t.Errorf("all: %q", got)
	}
	got := MediaIgnore(syncapi.Media{Folders: []string{"A", "B"}})
	want := []string{"(?d).*.tmp-*", "(?d)*.sync-conflict-*", "!/A", "!/B", "/*"}
	if len(got) != len(want) {
		t.Fatalf("%q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
