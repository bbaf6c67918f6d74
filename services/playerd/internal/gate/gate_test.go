package gate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

func refused(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, fault.Busy) || fault.RetryAfterOf(err) != 2*time.Second || fault.Message(err) != "too many covers at once; try again later" {
		t.Fatalf("%v (retry %v), want the busy refusal", err, fault.RetryAfterOf(err))
	}
}

// Run at once, then Wait waiting; beyond them refused at once. A waiting
// request gets the turn that frees, or is refused when its patience or its
// request ends.
func TestGate(t *testing.T) {
	g := New("covers", Limits{Run: 2, Wait: 1, Patience: time.Hour, RetryAfter: 2 * time.Second})
	ctx := context.Background()
	a, err := g.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		leave, err := g.Enter(ctx)
		if err == nil {
			defer leave()
		}
		got <- err
	}()
	// The third waits; once its place is taken, a fourth is refused.
	for len(g.wait) == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err = g.Enter(ctx)
	refused(t, err)
	a()
	if err := <-got; err != nil {
		t.Fatalf("the waiting request: %v", err)
	}

	full := New("covers", Limits{Run: 1, Wait: 1, Patience: time.Hour, RetryAfter: 2 * time.Second})
	if _, err := full.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	_, err = full.Enter(gone)
	refused(t, err)
	impatient := New("covers", Limits{Run: 1, Wait: 1, RetryAfter: 2 * time.Second})
	impatient.Enter(ctx)
	_, err = impatient.Enter(ctx)
	refused(t, err)
}
