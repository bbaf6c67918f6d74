package message

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Every way a message appears or goes is told, once, after it took effect;
// a refused request and a clear with nothing on screen are not.
func TestBoardTellsEveryChange(t *testing.T) {
	now := time.Date(2026, 11, 28, 18, 0, 0, 0, time.UTC)
	var b *Board
	var told []string
	b = NewBoard(func() time.Time { return now }, func(e Event) {
		// What the board has by the time it tells is what it told.
		if got := b.Active(); (got == nil) != (e.Message == nil) || got != nil && got.Message != e.Message.Message {
			t.Errorf("told %+v while the board has %+v", e.Message, got)
		}
		if e.Message == nil {
			told = append(told, "cleared")
		} else {
			told = append(told, e.Message.Message)
		}
	})
	show := func(text string, ms int64) error {
		_, err := b.Show(Request{Message: &text, DurationMS: &ms})
		return err
	}
	for _, step := range []func() error{
		func() error { return show("Eins", 5000) },
		func() error { return show("Zwei", 5000) },
		func() error { return show("weg", 0) },
		func() error { return show("auch weg", 0) }, // nothing on screen: nothing to clear
		func() error { return show("Drei", 5000) },
		func() error { b.Dismiss(); b.Dismiss(); return nil },
		func() error { return show("Vier", 1000) },
		func() error { now = now.Add(time.Second); b.Active(); b.Active(); return nil }, // expired: told once
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if err := show(" ", 1000); !errors.Is(err, fault.Invalid) {
		t.Errorf("a blank message: %v", err)
	}
	want := []string{"Eins", "Zwei", "cleared", "Drei", "cleared", "Vier", "cleared"}
	if !slices.Equal(told, want) {
		t.Errorf("told %q, want %q", told, want)
	}
}
