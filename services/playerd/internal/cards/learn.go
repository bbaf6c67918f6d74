package cards

import (
	"context"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Teach mode: a parent asks the box to learn the next card; the next card
// read is reported (and not acted on) instead.

// States of teach mode.
const (
	LearnIdle    = "idle"    // not asked, or cancelled
	LearnWaiting = "waiting" // waiting for a card until Until
	LearnSeen    = "seen"    // a card was read: Card
	LearnExpired = "expired" // no card came in time
)

// Learn bounds.
const (
	DefaultLearnTimeout = 60 * time.Second
	MaxLearnTimeout     = 10 * time.Minute
	MaxLearnWait        = 25 * time.Second // below the API's write timeout
)

// Learn is teach mode as the API reports it.
type Learn struct {
	State string     `json:"state"`
	Until *time.Time `json:"until,omitempty"`
	Card  *Seen      `json:"card,omitempty"`
}

// Seen is the card teach mode took, with its mapping if it has one.
type Seen struct {
	ID      string    `json:"id"`
	Device  string    `json:"device"`
	At      time.Time `json:"at"`
	Known   bool      `json:"known"`
	Mapping *Mapping  `json:"mapping,omitempty"`
}

type learnState struct {
	waiting bool
	until   time.Duration // the clock's uptime: a step of the wall clock does not end it
	card    *Seen
	expired bool
}

// StartLearn waits for the next card for timeout (0: the default). A card
// seen before is forgotten.
func (s *Service) StartLearn(timeout time.Duration) (Learn, error) {
	if timeout == 0 {
		timeout = DefaultLearnTimeout
	}
	if timeout < time.Second || timeout > MaxLearnTimeout {
		return Learn{}, fault.New(fault.Invalid, "timeout_seconds must be 1..%d", int(MaxLearnTimeout/time.Second))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.learn = learnState{waiting: true, until: s.o.Clock.Uptime() + timeout}
	s.learnChanged()
	return s.learnView(), nil
}

// StopLearn ends teach mode and forgets its card.
func (s *Service) StopLearn() Learn {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.learn = learnState{}
	s.learnChanged()
	return s.learnView()
}

// Learning reports teach mode. While it waits for a card, it waits up to
// wait (at most MaxLearnWait) for one, so a client can ask again and again
// without missing it or asking in a busy loop.
func (s *Service) Learning(ctx context.Context, wait time.Duration) Learn {
	wait = min(max(wait, 0), MaxLearnWait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		l, changed := s.learnView(), s.learnCh
		left := s.learn.until - s.o.Clock.Uptime()
		s.mu.Unlock()
		if l.State != LearnWaiting || wait == 0 {
			return l
		}
		// Expiry is by the service's clock; wake for it on the real one.
		expire := time.NewTimer(max(left, 0))
		select {
		case <-changed:
		case <-expire.C:
		case <-timer.C:
			expire.Stop()
			return s.learnNow()
		case <-ctx.Done():
			expire.Stop()
			return s.learnNow()
		}
		expire.Stop()
	}
}

func (s *Service) learnNow() Learn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.learnView()
}

// learnView is teach mode now; s.mu is held.
func (s *Service) learnView() Learn {
	l := s.learn
	up := s.o.Clock.Uptime()
	if l.waiting && up >= l.until {
		s.learn = learnState{expired: true}
		s.learnChanged()
		l = s.learn
	}
	switch {
	case l.waiting:
		u := s.o.Clock.Now().Add(l.until - up)
		return Learn{State: LearnWaiting, Until: &u}
	case l.card != nil:
		c := *l.card
		return Learn{State: LearnSeen, Card: &c}
	case l.expired:
		return Learn{State: LearnExpired}
	}
	return Learn{State: LearnIdle}
}

// learnTake gives the card to teach mode if it waits for one; s.mu is held.
func (s *Service) learnTake(id, device string, now time.Time, known bool, m Mapping) bool {
	if s.learnView().State != LearnWaiting {
		return false
	}
	seen := &Seen{ID: id, Device: device, At: now, Known: known}
	if known {
		seen.Mapping = &m
	}
	s.learn = learnState{card: seen}
	s.learnChanged()
	return true
}

func (s *Service) learnChanged() {
	close(s.learnCh)
	s.learnCh = make(chan struct{})
}
