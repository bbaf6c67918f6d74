package events

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

type vol struct {
	Volume int `json:"volume"`
}

// drain reads what s has now.
func drain(t *testing.T, s *Subscription) []*Event {
	t.Helper()
	var out []*Event
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if ev == nil {
			return out
		}
		out = append(out, ev)
	}
}

func publish(t *testing.T, b *Bus, n int) {
	t.Helper()
	for i := range n {
		if err := b.Publish(KindVolume, vol{i}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestIdsIncreaseAndSubscribersSeeWhatFollows(t *testing.T) {
	b := New(Config{FirstID: 100})
	publish(t, b, 2) // before anyone listens
	s := b.Subscribe()
	defer s.Close()
	if s.From() != 101 {
		t.Errorf("From = %d, want 101 (the last event before the subscription)", s.From())
	}
	publish(t, b, 3)
	got := drain(t, s)
	if len(got) != 3 {
		t.Fatalf("got %d events, want 3", len(got))
	}
	for i, ev := range got {
		if ev.ID != uint64(102+i) || ev.Kind != KindVolume || string(ev.Data) != `{"volume":`+string(rune('0'+i))+`}` {
			t.Errorf("event %d: id %d kind %s data %s", i, ev.ID, ev.Kind, ev.Data)
		}
	}
	if st := b.Stats(); st.LastID != 104 || st.Subscribers != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestRandomFirstIDStaysExactInJavaScript(t *testing.T) {
	seen := map[uint64]bool{}
	for range 20 {
		b := New(Config{})
		publish(t, b, 1)
		id := b.Stats().LastID
		if id < 1 || id > maxFirstID {
			t.Fatalf("first id %d outside 1..2^48", id)
		}
		seen[id] = true
	}
	if len(seen) < 19 {
		t.Errorf("first ids repeat: %v", seen)
	}
}

func TestResume(t *testing.T) {
	b := New(Config{FirstID: 1, Keep: 8})
	publish(t, b, 10) // ids 1..10; 3..10 kept
	cases := []struct {
		after  uint64
		ok     bool
		replay []uint64
	}{
		{10, true, nil},
		{7, true, []uint64{8, 9, 10}},
		{2, true, []uint64{3, 4, 5, 6, 7, 8, 9, 10}},
		{1, false, nil},  // 2 is gone
		{0, false, nil},  // before the first
		{11, false, nil}, // not given yet: another run's id
		{math.MaxUint64, false, nil},
	}
	for _, c := range cases {
		s, ok := b.Resume(c.after)
		var ids []uint64
		for _, ev := range drain(t, s) {
			ids = append(ids, ev.ID)
		}
		if ok != c.ok || !equal(ids, c.replay) {
			t.Errorf("Resume(%d) = %v, replay %v; want %v, %v", c.after, ok, ids, c.ok, c.replay)
		}
		if !ok && s.From() != 10 {
			t.Errorf("Resume(%d) not ok: From = %d, want now (10)", c.after, s.From())
		}
		s.Close()
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSlowSubscriberIsDroppedOthersGoOn(t *testing.T) {
	b := New(Config{FirstID: 1, Keep: 4})
	slow, fast := b.Subscribe(), b.Subscribe()
	defer fast.Close()
	for i := range 10 {
		publish(t, b, 1)
		if got := drain(t, fast); len(got) != 1 || got[0].ID != uint64(i+1) {
			t.Fatalf("fast subscriber at %d: %v", i, got)
		}
	}
	select {
	case <-slow.Done():
	default:
		t.Fatal("the slow subscriber was not dropped")
	}
	if _, err := slow.Next(); !errors.Is(err, ErrSlow) {
		t.Errorf("slow.Next: %v, want ErrSlow", err)
	}
	if st := b.Stats(); st.Dropped != 1 || st.Subscribers != 1 {
		t.Errorf("stats %+v", st)
	}
	// Its Ready wakes at once, so a waiting reader learns of it.
	select {
	case <-slow.Ready():
	default:
		t.Error("Ready of a dropped subscription is not closed")
	}
}

// A subscriber that keeps up within the kept events is never dropped, even
// when it reads in bursts.
func TestLaggingWithinKeepIsFine(t *testing.T) {
	b := New(Config{FirstID: 1, Keep: 4})
	s := b.Subscribe()
	defer s.Close()
	for range 5 {
		publish(t, b, 4)
		if got := drain(t, s); len(got) != 4 {
			t.Fatalf("got %d", len(got))
		}
	}
}

func TestKeptBytesAreBounded(t *testing.T) {
	b := New(Config{FirstID: 1, Keep: 100, KeepBytes: 1000})
	big := strings.Repeat("x", 300)
	for range 10 {
		if err := b.Publish(KindMessage, map[string]string{"m": big}); err != nil {
			t.Fatal(err)
		}
	}
	st := b.Stats()
	if st.KeptBytes > 1000 || st.Kept != 3 {
		t.Errorf("kept %d events, %d bytes; want 3, at most 1000", st.Kept, st.KeptBytes)
	}
	// One event larger than the bound is still delivered.
	s := b.Subscribe()
	defer s.Close()
	if err := b.Publish(KindMessage, map[string]string{"m": strings.Repeat("y", 2000)}); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, s); len(got) != 1 {
		t.Errorf("the large event: %d delivered", len(got))
	}
}

func TestPublishRefusesUnknownKindsAndBadPayloads(t *testing.T) {
	b := New(Config{FirstID: 1})
	s := b.Subscribe()
	defer s.Close()
	for _, k := range []Kind{"", "volumes", KindStatus, KindReset} {
		if err := b.Publish(k, vol{1}); !errors.Is(err, fault.Invalid) {
			t.Errorf("Publish(%q): %v, want invalid", k, err)
		}
	}
	if err := b.Publish(KindVolume, math.NaN()); !errors.Is(err, fault.Invalid) {
		t.Errorf("NaN payload: %v", err)
	}
	if err := b.Publish(KindVolume, make(chan int)); !errors.Is(err, fault.Invalid) {
		t.Errorf("channel payload: %v", err)
	}
	if got := drain(t, s); len(got) != 0 || b.Stats().LastID != 0 {
		t.Errorf("refused events were published: %v, last id %d", got, b.Stats().LastID)
	}
}

func TestCloseEndsTheSubscription(t *testing.T) {
	b := New(Config{})
	s := b.Subscribe()
	s.Close()
	s.Close()
	if _, err := s.Next(); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if s.Err() != ErrClosed || b.Stats().Subscribers != 0 || b.Stats().Dropped != 0 {
		t.Errorf("err %v, stats %+v", s.Err(), b.Stats())
	}
}

// Several publishers and readers at once (run with -race): every reader
// sees every event once, in id order, and each publisher's events in the
// order it published them.
func TestConcurrentPublishersAndReaders(t *testing.T) {
	const publishers, each, readers = 4, 200, 8
	b := New(Config{Keep: publishers * each}) // nobody is dropped here
	type payload struct{ P, N int }
	var wg sync.WaitGroup
	results := make([][]*Event, readers)
	start := make(chan struct{})
	for r := range readers {
		s := b.Subscribe()
		wg.Go(func() {
			defer s.Close()
			<-start
			for len(results[r]) < publishers*each {
				ready := s.Ready()
				ev, err := s.Next()
				if err != nil {
					t.Error(err)
					return
				}
				if ev == nil {
					<-ready
					continue
				}
				results[r] = append(results[r], ev)
			}
		})
	}
	close(start)
	var pw sync.WaitGroup
	for p := range publishers {
		pw.Go(func() {
			for n := range each {
				if err := b.Publish(KindTrack, payload{p, n}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	pw.Wait()
	wg.Wait()
	for r, evs := range results {
		next := make([]int, publishers)
		for i, ev := range evs {
			if i > 0 && ev.ID != evs[i-1].ID+1 {
				t.Fatalf("reader %d: id %d after %d", r, ev.ID, evs[i-1].ID)
			}
			pl := ev.Payload.(payload)
			if pl.N != next[pl.P] {
				t.Fatalf("reader %d: publisher %d's event %d arrived when %d was due", r, pl.P, pl.N, next[pl.P])
			}
			next[pl.P]++
		}
	}
}

func TestEventTimeComesFromTheClock(t *testing.T) {
	at := time.Date(2026, 3, 1, 19, 30, 0, 0, time.UTC)
	b := New(Config{Now: func() time.Time { return at }})
	s := b.Subscribe()
	defer s.Close()
	publish(t, b, 1)
	if ev := drain(t, s)[0]; !ev.Time.Equal(at) {
		t.Errorf("time %v", ev.Time)
	}
}

func TestBusCloseEndsEverySubscription(t *testing.T) {
	b := New(Config{})
	s := b.Subscribe()
	b.Close()
	<-s.Done()
	if s.Err() != ErrClosed {
		t.Errorf("after Close: %v", s.Err())
	}
	later, ok := b.Resume(b.Stats().LastID)
	if !ok || later.Err() != ErrClosed {
		t.Errorf("a subscription after Close: ok %v, err %v", ok, later.Err())
	}
	if err := b.Publish(KindVolume, vol{1}); err != nil || b.Stats().Subscribers != 0 {
		t.Errorf("publish after Close: %v, stats %+v", err, b.Stats())
	}
}
