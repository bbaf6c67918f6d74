package household

import (
	"testing"
	"time"
)

// A box whose clock runs a day ahead wins the concurrent edits of its own
// entries (the documented weakness), but its lead does not spread: a box
// that read its stamps keeps its own clock, so a later concurrent edit of
// that box loses to one made later in real time elsewhere. A stamp within
// MaxAhead is still taken on, so an edit made after seeing it wins.
func TestAClockFarAheadDoesNotSpread(t *testing.T) {
	a, b, c := newBox(t, "aaaa", t0.Add(24*time.Hour)), newBox(t, "bbbb", t0), newBox(t, "cccc", t0)

	a.put(t, Cards, "7", value{Action: "A"})
	pull(t, a, b, Cards, "7.json")
	if rep := reconcile(t, b); rep.Ahead != 1 || rep.AheadBy < 23*time.Hour {
		t.Errorf("b's reconcile does not report the stamp a day ahead: %+v", rep)
	}

	// b, having read a's stamp, and c, which has not, edit card 8 while
	// apart, c a second later in real time: c's edit wins on both.
	b.put(t, Cards, "8", value{Action: "B"})
	*c.clock = t0.Add(time.Second)
	c.put(t, Cards, "8", value{Action: "C"})
	if e, _, _ := b.s.Get(Cards, "8"); e.Stamp.Wall != t0.UnixMilli() {
		t.Errorf("b's stamp %v followed a's clock", e.Stamp)
	}
	conflict(t, b, c, Cards, "8", true)
	for _, x := range []*box{b, c} {
		reconcile(t, x)
		if got := x.list(t, Cards)["8"].Action; got != "C" {
			t.Errorf("%s: card 8 is %q: the lead of a's clock spread to b", x.s.Box(), got)
		}
	}

	// The weakness that stays: a's own concurrent edit of card 7 wins
	// over b's, made later in real time, on both boxes alike.
	*b.clock = t0.Add(time.Hour)
	b.put(t, Cards, "7", value{Action: "B later"})
	a.put(t, Cards, "7", value{Action: "A again"})
	conflict(t, a, b, Cards, "7", false)
	for _, x := range []*box{a, b} {
		reconcile(t, x)
		if got := x.list(t, Cards)["7"].Action; got != "A again" {
			t.Errorf("%s: card 7 is %q; the rule must pick the same version everywhere", x.s.Box(), got)
		}
	}

	// Within the bound a stamp is taken on: an edit after seeing it wins.
	d, e := newBox(t, "dddd", t0.Add(MaxAhead/2)), newBox(t, "eeee", t0)
	d.put(t, Cards, "9", value{Action: "D"})
	pull(t, d, e, Cards, "9.json")
	if rep := reconcile(t, e); rep.Ahead != 0 {
		t.Errorf("a stamp within MaxAhead counted as ahead: %+v", rep)
	}
	e.put(t, Cards, "9", value{Action: "E"})
	ed, _, _ := d.s.Get(Cards, "9")
	ee, _, _ := e.s.Get(Cards, "9")
	if ee.Stamp.Compare(ed.Stamp) <= 0 {
		t.Errorf("e's edit after seeing d's carries %v, not past %v", ee.Stamp, ed.Stamp)
	}
}
