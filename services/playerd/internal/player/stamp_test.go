package player

import (
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

// A place left after the wall clock stepped back (or before it is set: a
// Pi boots in 1970) still orders as the newest, so it is neither shown
// last among the places to continue nor the first podcast place dropped.
func TestResumeStampAfterAStepBack(t *testing.T) {
	set := time.Date(2026, 3, 23, 19, 0, 0, 0, time.UTC)
	saved := map[string]state.ResumePoint{
		"a": {UpdatedAt: set},
		"b": {UpdatedAt: set.Add(-time.Hour)},
	}
	if got := resumeStamp(set.Add(time.Minute), saved); !got.Equal(set.Add(time.Minute)) {
		t.Errorf("with a clock that runs on: %v", got)
	}
	for _, now := range []time.Time{set.Add(-3 * time.Hour), time.Date(1970, 1, 1, 0, 0, 7, 0, time.UTC), set} {
		got := resumeStamp(now, saved)
		if !got.After(set) || got.Sub(set) > time.Second {
			t.Errorf("at %v: stamped %v, want just after the newest saved (%v)", now, got, set)
		}
		saved["new"] = state.ResumePoint{UpdatedAt: got}
		if again := resumeStamp(now, saved); !again.After(got) {
			t.Errorf("at %v: the next place is stamped %v, not after %v", now, again, got)
		}
		delete(saved, "new")
	}
}
