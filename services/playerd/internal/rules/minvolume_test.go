package rules

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	lib "github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

type oneFolder lib.Folder

func (f oneFolder) Folder(id string) (lib.Folder, bool) { return lib.Folder(f), id == f.ID }

// Issue 36: the sleep timer's fade is the one volume change below the
// parent's minimum. With the real player and a minimum of 20, "until the
// end of the track" fades the music below 20 towards silence, pauses at
// the track's end, and the volume is back at 50 for the next start.
func TestSleepFadeGoesBelowTheMinimumVolume(t *testing.T) {
	const rate = 48000
	path := filepath.Join(t.TempDir(), "a.wav")
	if err := os.WriteFile(path, testmedia.WAV(rate, make([][2]int16, 3*rate)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Two tracks: the end of the first is the sleep timer's, not the queue's.
	f := oneFolder{ID: "a", Name: "A", Tracks: []lib.Track{{ID: "a1", Title: "A1", Duration: 3, Path: path}, {ID: "a2", Title: "A2", Duration: 3, Path: path}}}
	k := NewKeeper(Config{Tick: 50 * time.Millisecond, SleepFade: 2 * time.Second})
	p := player.New(player.Config{Open: func(r int) (output.Sink, error) { return output.NewNull(r), nil },
		Catalog: f, MaxVolume: 80, MinVolume: 20, StartVolume: 50, Gate: k})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { p.Run(ctx); done <- struct{}{} }()
	go func() { k.Run(ctx, p); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()

	touch := auth.WithCaller(context.Background(), auth.Caller{Via: auth.Touch})
	if _, err := p.Do(touch, player.Command{Action: player.ActFolder, FolderID: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Do(touch, player.Command{Action: player.ActSleepTimer, Until: player.UntilTrack}); err != nil {
		t.Fatal(err)
	}
	least := 100
	deadline := time.After(20 * time.Second)
	for {
		changed := p.Changed()
		st := p.Status()
		if st.State == player.Playing {
			least = min(least, st.Volume)
		}
		if st.State == player.Paused && st.Volume == 50 {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no pause with the volume back; status %+v", st)
		}
	}
	if least >= 20 {
		t.Errorf("the fade stopped at %d, not below the minimum 20", least)
	}
}
