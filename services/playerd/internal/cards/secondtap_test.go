package cards

import (
	"context"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Each second tap of the card whose folder plays, set for the document and
// overridden by a card; a paused folder's card always continues.
func TestSecondTap(t *testing.T) {
	for _, c := range []struct {
		doc, card string
		want      string
		cmd       *player.Command
	}{
		{SameCardContinue, "", OutUnchanged, nil},
		{SameCardTogglePause, "", OutPaused, &player.Command{Action: player.ActPause}},
		{SameCardRestart, "", OutRestarted, &player.Command{Action: player.ActFolder, FolderID: "f1"}},
		{SameCardNext, "", OutSkipped, &player.Command{Action: player.ActNext}},
		{SameCardContinue, SameCardNext, OutSkipped, &player.Command{Action: player.ActNext}},
		{SameCardNext, SameCardRestart, OutRestarted, &player.Command{Action: player.ActFolder, FolderID: "f1"}},
		{SameCardTogglePause, SameCardContinue, OutUnchanged, nil},
	} {
		f := newFixture(t)
		if err := f.svc.Replace(Doc{Version: 1, SameCard: c.doc, Cards: map[string]Mapping{"11": {Action: ActFolder, FolderID: "f1", SameCard: c.card}}}); err != nil {
			t.Fatal(err)
		}
		if r := f.read("11"); r.Outcome != OutStarted {
			t.Fatalf("%s/%s first read: %+v", c.doc, c.card, r)
		}
		if r := f.read("11"); r.Outcome != c.want {
			t.Errorf("%s/%s second tap: %s, want %s", c.doc, c.card, r.Outcome, c.want)
		}
		cmds := f.player.commands()
		switch {
		case c.cmd == nil && len(cmds) != 1:
			t.Errorf("%s/%s: commands %+v, want only the start", c.doc, c.card, cmds)
		case c.cmd != nil && (len(cmds) != 2 || cmds[1].Action != c.cmd.Action || cmds[1].FolderID != c.cmd.FolderID):
			t.Errorf("%s/%s: commands %+v, want the start and %+v", c.doc, c.card, cmds, *c.cmd)
		}
		// Paused: every choice continues.
		f.player.Do(context.Background(), player.Command{Action: player.ActPause})
		if r := f.read("11"); r.Outcome != OutContinued {
			t.Errorf("%s/%s paused: %s, want continued", c.doc, c.card, r.Outcome)
		}
	}
}

func TestSameCardValidated(t *testing.T) {
	for _, m := range []Mapping{
		{Action: ActStop, SameCard: SameCardNext},
		{Action: ActFolder, FolderID: "f1", SameCard: "twice"},
	} {
		if err := m.Validate(); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%+v: %v, want invalid", m, err)
		}
	}
	for _, sc := range sameCards {
		if err := (Mapping{Action: ActResume, FolderID: "f1", SameCard: sc}).Validate(); err != nil {
			t.Errorf("%s: %v", sc, err)
		}
		d := Defaults()
		d.SameCard = sc
		if err := d.Validate(); err != nil {
			t.Errorf("document %s: %v", sc, err)
		}
	}
}
