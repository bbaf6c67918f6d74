package main

import (
	"strings"
	"testing"
	"time"
)

func eq(a, b int) bool { return a == b }

func newVolume(known int) *register[int] {
	return &register[int]{name: "volume", known: known, match: eq}
}

func TestRegisterAfterACut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cut := t0.Add(10 * time.Second)
	for _, tc := range []struct {
		name  string
		acks  []time.Duration // after t0 per change; <0: not acknowledged
		got   int             // changes send the values 1, 2, 3, …; known is 0
		fails string
	}{
		{"nothing acknowledged, old value", []time.Duration{-1, -1}, 0, ""},
		{"nothing acknowledged, a sent value", []time.Duration{-1, -1}, 2, ""},
		{"acknowledged late, old value", []time.Duration{9500 * time.Millisecond}, 0, ""},
		{"acknowledged in time, survived", []time.Duration{time.Second, 2 * time.Second}, 2, ""},
		{"acknowledged in time, a later one shown", []time.Duration{time.Second, 9900 * time.Millisecond, -1}, 3, ""},
		{"acknowledged in time, lost", []time.Duration{time.Second, 2 * time.Second}, 1, "was acknowledged in time"},
		{"acknowledged in time, old value back", []time.Duration{time.Second}, 0, "was acknowledged in time"},
		{"a value never sent", []time.Duration{-1}, 7, "neither what it showed before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newVolume(0)
			for i, a := range tc.acks {
				c := r.send(i + 1)
				if a >= 0 {
					c.acked = t0.Add(a)
				}
			}
			cutAt(r.pending, cut, time.Second)
			err := r.check(tc.got)
			if tc.fails == "" && err != nil || tc.fails != "" && (err == nil || !strings.Contains(err.Error(), tc.fails)) {
				t.Fatalf("check(%d) = %v, want failure %q", tc.got, err, tc.fails)
			}
			if r.known != tc.got || r.pending != nil {
				t.Fatalf("after the check: known %d, %d pending", r.known, len(r.pending))
			}
		})
	}
}

func TestSetAfterACut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cut := t0.Add(10 * time.Second)
	newCards := func() *set[string] {
		s := &set[string]{name: "cards", known: map[string]string{"1": "a"}, match: func(a, b string) bool { return a == b }}
		s.send("2", "b").acked = t0.Add(time.Second)             // must survive
		s.send("3", "c").acked = t0.Add(9500 * time.Millisecond) // too late to have to
		s.send("4", "d")                                         // never acknowledged
		cutAt(s.pending, cut, time.Second)
		return s
	}
	for _, tc := range []struct {
		name  string
		got   map[string]string
		fails []string
	}{
		{"the survivors only", map[string]string{"1": "a", "2": "b"}, nil},
		{"everything", map[string]string{"1": "a", "2": "b", "3": "c", "4": "d"}, nil},
		{"an acknowledged card lost", map[string]string{"1": "a", "3": "c"}, []string{"2 is missing"}},
		{"a known card lost", map[string]string{"2": "b"}, []string{"1 is missing"}},
		{"a torn mapping", map[string]string{"1": "a", "2": "b", "4": "x"}, []string{"4 is x, want d"}},
		{"a card from nowhere", map[string]string{"1": "a", "2": "b", "9": "z"}, []string{"9 is there, but was never sent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newCards()
			errs := s.check(tc.got)
			if len(errs) != len(tc.fails) {
				t.Fatalf("check = %v, want %d failures %q", errs, len(tc.fails), tc.fails)
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tc.fails[i]) {
					t.Fatalf("failure %d = %v, want %q", i, e, tc.fails[i])
				}
			}
			if len(s.known) != len(tc.got) || s.pending != nil {
				t.Fatalf("after the check: known %v, %d pending", s.known, len(s.pending))
			}
		})
	}
}

func TestAnEarlyCutKeepsWhatHadToSurvive(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newVolume(0)
	r.send(1).acked = t0
	cutAt(r.pending, t0.Add(5*time.Second), time.Second)
	// A second cut during the next boot, before any check: nothing new
	// was sent, the first cut's verdict stands.
	cutAt(r.pending, t0.Add(time.Minute), time.Second)
	if err := r.check(0); err == nil {
		t.Fatal("a change that had to survive the first cut was lost, and the check passed")
	}

	// One acknowledged too late for the first cut may be lost, however
	// long ago a second cut makes that look.
	r = newVolume(0)
	r.send(1).acked = t0
	cutAt(r.pending, t0.Add(500*time.Millisecond), time.Second)
	cutAt(r.pending, t0.Add(time.Minute), time.Second)
	if err := r.check(0); err != nil {
		t.Fatalf("a change too late for the first cut was lost: %v", err)
	}
}
