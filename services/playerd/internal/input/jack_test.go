package input

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/input/gpio"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/wiring"
)

// The jack-detect line on the fake chip: its level at start, each plug
// and unplug (inverted where the wiring says so), never a button's
// command (the button pressed after the jack's edges gives the first one);
// a wiring without it says none is wired.
func TestJackLine(t *testing.T) {
	store, _ := wiring.Load(t.TempDir(), nil)
	w := gpioWiring(Button{Line: 17, Action: BtnStop})
	w.GPIO.Jack = &wiring.Jack{Line: 5}
	if err := store.Put(w); err != nil {
		t.Fatal(err)
	}
	chip := &fakeChip{levels: map[int]bool{5: true}, opened: make(chan *fakeLines, 4)}
	jack := make(chan string, 16)
	rec := newRecorder()
	m, _ := New(Options{Wiring: store, GPIO: chip, Player: rec,
		OnJack: func(wired, in bool) { jack <- fmt.Sprintf("wired %v in %v", wired, in) }})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	lines := <-chip.opened
	want(t, jack, "wired true in true") // plugged in before the box started
	lines.events <- gpio.Event{Offset: 5, Active: false}
	want(t, jack, "wired true in false")
	lines.events <- gpio.Event{Offset: 5, Active: true}
	want(t, jack, "wired true in true")
	lines.events <- gpio.Event{Offset: 17, Active: true}
	want(t, rec.cmds, player.Command{Action: player.ActStop})
	if st := m.Status().GPIO; len(st.Lines) != 2 || st.Lines[1] != 5 {
		t.Errorf("gpio status %+v: want the jack's line among the lines", st)
	}

	w.GPIO.Jack.Inverted = true
	if err := store.Put(w); err != nil {
		t.Fatal(err)
	}
	lines = <-chip.opened
	want(t, jack, "wired true in false") // the level is still active
	lines.events <- gpio.Event{Offset: 5, Active: false}
	want(t, jack, "wired true in true")

	w.GPIO.Jack = nil
	if err := store.Put(w); err != nil {
		t.Fatal(err)
	}
	want(t, jack, "wired false in false")
}
