package main

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// A change is one write the box was asked for: the value it sets, and when
// the box acknowledged it (zero: not acknowledged before the power went).
type change[V any] struct {
	key   string // for sets: which element; empty for registers
	value V
	acked time.Time
	// mustSurvive is decided at the first cut after it was sent:
	// acknowledged more than the margin before it.
	mustSurvive bool
	decided     bool
}

// register is one value that each change replaces (the volume, the queue,
// a setting). After a cut the box may show the last change that had to
// survive or any later one; with none that had to, what it showed at the
// last boot or any change since.
type register[V any] struct {
	name    string
	known   V
	pending []change[V]
	match   func(want, got V) bool
}

func (r *register[V]) send(v V) *change[V] {
	r.pending = append(r.pending, change[V]{value: v})
	return &r.pending[len(r.pending)-1]
}

// check compares what the box shows after a boot with what it may show,
// and takes it as known.
func (r *register[V]) check(got V) error {
	allowed := []V{r.known}
	for i, c := range r.pending {
		if c.mustSurvive {
			allowed = allowed[:0]
		}
		allowed = append(allowed, r.pending[i].value)
	}
	ok := slices.ContainsFunc(allowed, func(want V) bool { return r.match(want, got) })
	lost := r.lastSurvivor()
	r.known, r.pending = got, nil
	if ok {
		return nil
	}
	if lost != nil {
		return fmt.Errorf("%s: the box shows %v, but %v was acknowledged in time to survive the cut (allowed: %v)", r.name, got, lost.value, allowed)
	}
	return fmt.Errorf("%s: the box shows %v, which is neither what it showed before nor anything sent since (allowed: %v)", r.name, got, allowed)
}

func (r *register[V]) lastSurvivor() *change[V] {
	for i := len(r.pending) - 1; i >= 0; i-- {
		if r.pending[i].mustSurvive {
			return &r.pending[i]
		}
	}
	return nil
}

// set is a collection of independent elements that changes only add (cards,
// uploads): after a cut, every element known or sent with a change that had
// to survive is there as sent; any other sent one is there as sent or not at
// all; nothing else is there.
type set[V any] struct {
	name    string
	known   map[string]V
	pending []change[V]
	match   func(want, got V) bool
}

func (s *set[V]) send(key string, v V) *change[V] {
	s.pending = append(s.pending, change[V]{key: key, value: v})
	return &s.pending[len(s.pending)-1]
}

// sent reports how many elements are known or pending.
func (s *set[V]) size() int { return len(s.known) + len(s.pending) }

func (s *set[V]) check(got map[string]V) []error {
	var errs []error
	want := maps.Clone(s.known)
	if want == nil {
		want = map[string]V{}
	}
	must := map[string]bool{}
	for k := range s.known {
		must[k] = true
	}
	for _, c := range s.pending {
		want[c.key] = c.value
		must[c.key] = must[c.key] || c.mustSurvive
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, there := got[k]
		switch {
		case !there && must[k]:
			errs = append(errs, fmt.Errorf("%s: %s is missing, but it was there before or acknowledged in time to survive the cut", s.name, k))
		case there && !s.match(want[k], g):
			errs = append(errs, fmt.Errorf("%s: %s is %v, want %v", s.name, k, g, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			errs = append(errs, fmt.Errorf("%s: %s is there, but was never sent", s.name, k))
		}
	}
	s.known, s.pending = maps.Clone(got), nil
	return errs
}

// cutAt decides for every pending change not decided at an earlier cut
// whether it had to survive this one at cut: acknowledged before
// cut-margin. A later cut (during the next boot, before any check) changes
// no verdict: what was not on the disk at the first cut is lost for good.
func cutAt[V any](pending []change[V], cut time.Time, margin time.Duration) (must, acked int) {
	for i := range pending {
		c := &pending[i]
		if c.decided {
			continue
		}
		c.decided = true
		if c.acked.IsZero() {
			continue
		}
		acked++
		if c.acked.Before(cut.Add(-margin)) {
			c.mustSurvive = true
			must++
		}
	}
	return must, acked
}
