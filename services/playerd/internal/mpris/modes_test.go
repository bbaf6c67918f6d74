package mpris

import (
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Shuffle and LoopStatus read the player's switches, written become its
// shuffle and repeat commands, and a modes event signals them.
func TestShuffleAndLoopStatus(t *testing.T) {
	f := start(t)
	if got := f.get(t, "Shuffle"); got != false {
		t.Errorf("Shuffle %v", got)
	}
	if got := f.get(t, "LoopStatus"); got != "None" {
		t.Errorf("LoopStatus %v", got)
	}
	set := func(name string, v any) []player.Command {
		t.Helper()
		if err := f.obj.SetProperty(playerIface+"."+name, dbus.MakeVariant(v)); err != nil {
			t.Fatalf("%s = %v: %v", name, v, err)
		}
		return f.p.took()
	}
	if got := set("Shuffle", true); len(got) != 1 || got[0].Action != player.ActShuffle || got[0].On == nil || !*got[0].On {
		t.Errorf("Shuffle true sent %+v", got)
	}
	for loop, repeat := range map[string]string{"None": player.RepeatOff, "Track": player.RepeatTrack, "Playlist": player.RepeatFolder} {
		if got := set("LoopStatus", loop); len(got) != 1 || got[0].Action != player.ActRepeat || got[0].Word != repeat {
			t.Errorf("LoopStatus %s sent %+v, want repeat %s", loop, got, repeat)
		}
	}
	for name, v := range map[string]any{"LoopStatus": "Album", "Shuffle": "yes"} {
		if err := f.obj.SetProperty(playerIface+"."+name, dbus.MakeVariant(v)); err == nil {
			t.Errorf("%s = %v was taken", name, v)
		}
	}
	if got := f.p.took(); len(got) != 0 {
		t.Errorf("refused values sent %+v", got)
	}

	if err := f.client.AddMatchSignal(dbus.WithMatchObjectPath(objectPath)); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan *dbus.Signal, 10)
	f.client.Signal(sigs)
	f.p.set(func(s *player.Status) { s.Shuffle, s.Repeat, s.Mode = true, player.RepeatTrack, player.ModeShuffle })
	if err := f.bus.Publish(events.KindModes, map[string]any{"shuffle": true}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-sigs:
		changed := s.Body[1].(map[string]dbus.Variant)
		if s.Name != propsIface+".PropertiesChanged" || len(changed) != 2 || changed["Shuffle"].Value() != true || changed["LoopStatus"].Value() != "Track" {
			t.Errorf("after the modes event: %s %v", s.Name, s.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no signal after the modes event")
	}
}
