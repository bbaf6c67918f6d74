package state

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
)

// The schedule behind "a person's change on disk within 1 s, the position
// within 10 s, and no write storm".
func TestDueAt(t *testing.T) {
	now := 2 * time.Hour
	for _, c := range []struct {
		name      string
		u         Urgency
		lastWrite time.Duration
		wrote     bool
		want      time.Duration
	}{
		{"urgent waits only to coalesce", Urgent, now - time.Millisecond, true, now + Settle},
		{"urgent ignores the routine spacing", Urgent, now - time.Second, true, now + Settle},
		{"routine waits for its spacing", Routine, now - time.Second, true, now - time.Second + RoutineEvery},
		{"routine long after the last write", Routine, now - time.Hour, true, now + Settle},
		{"routine on a first start", Routine, 0, false, now + Settle},
	} {
		if got := dueAt(c.u, now, c.lastWrite, c.wrote); got != c.want {
			t.Errorf("%s: due %v after now, want %v", c.name, got-now, c.want-now)
		}
	}
	if Settle < 250*time.Millisecond || Settle > 500*time.Millisecond {
		t.Errorf("Settle %v: writes under a stream of changes must be 250..500 ms apart", Settle)
	}
	if RoutineEvery+time.Second >= 10*time.Second {
		t.Errorf("RoutineEvery %v plus the 1 s report granularity must stay under 10 s", RoutineEvery)
	}
}

// An urgent change pulls a routine one forward; a routine change never
// pushes an urgent one back. The newest state is the one kept.
func TestSaveKeepsTheEarliestDue(t *testing.T) {
	sv := NewSaver(t.TempDir(), nil)
	sv.lastWrite, sv.wrote = sv.clock.Uptime(), true
	sv.Save(Saved{Volume: 1}, Routine)
	routineDue := sv.due
	sv.Save(Saved{Volume: 2}, Urgent)
	urgentDue := sv.due
	if urgentDue >= routineDue || urgentDue-sv.clock.Uptime() > Settle {
		t.Errorf("urgent after routine: due in %v, want within %v", urgentDue-sv.clock.Uptime(), Settle)
	}
	sv.Save(Saved{Volume: 3}, Routine)
	if sv.due != urgentDue || sv.pending.Volume != 3 {
		t.Errorf("routine after urgent: due moved by %v, pending volume %d", sv.due-urgentDue, sv.pending.Volume)
	}
}

// Run hears of a state only when its due time is new: the player's report
// of each second replaces a pending state without waking it.
func TestSaveWakesRunOnlyForANewDue(t *testing.T) {
	sv := NewSaver(t.TempDir(), nil)
	sv.lastWrite, sv.wrote = sv.clock.Uptime(), true
	woken := func() bool {
		select {
		case <-sv.wake:
			return true
		default:
			return false
		}
	}
	for i, c := range []struct {
		u    Urgency
		want bool
	}{
		{Routine, true},  // nothing was pending
		{Routine, false}, // the next second, due as before
		{Routine, false},
		{Urgent, true}, // due sooner
		{Routine, false},
		{Urgent, false}, // as soon as the pending one
	} {
		sv.Save(Saved{Volume: i}, c.u)
		if got := woken(); got != c.want {
			t.Errorf("save %d: woken %v, want %v", i, got, c.want)
		}
		if sv.pending.Volume != i {
			t.Errorf("save %d: pending volume %d", i, sv.pending.Volume)
		}
	}
}

// A queued urgent change reaches the disk through Run without Flush.
func TestRunWritesUrgentChanges(t *testing.T) {
	dir := t.TempDir()
	sv := NewSaver(dir, func(err error) { t.Errorf("report %v", err) })
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); sv.Flush() }()
	go sv.Run(ctx)
	for v := 1; v <= 20; v++ {
		sv.Save(Saved{Volume: v}, Urgent)
	}
	deadline := time.Now().Add(10 * time.Second) // only bounds a hang
	for {
		var s Saved
		if err := ReadJSON(filepath.Join(dir, FileName), &s); err == nil && s.Volume == 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the urgent change never reached the disk")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The schedule is the process's monotonic time: a step of the wall clock
// by a year, back or forward, neither holds a write back nor lets a
// routine write come early; a failure is dated on the wall clock.
func TestScheduleAcrossClockSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		sv := NewSaver(dir, nil)
		clk := clocktest.NewRunning(time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC))
		sv.clock = clk
		ctx, cancel := context.WithCancel(context.Background())
		defer func() { cancel(); sv.Flush() }()
		go sv.Run(ctx)
		volume := func() int {
			var s Saved
			if err := ReadJSON(filepath.Join(dir, FileName), &s); err != nil {
				return -1
			}
			return s.Volume
		}

		sv.Save(Saved{Volume: 1}, Urgent)
		clk.Step(-365 * 24 * time.Hour)
		time.Sleep(Settle)
		synctest.Wait()
		if v := volume(); v != 1 {
			t.Fatalf("an urgent change %v after a step back: volume %d on disk", Settle, v)
		}
		sv.Save(Saved{Volume: 2}, Routine)
		clk.Step(2 * 365 * 24 * time.Hour)
		time.Sleep(RoutineEvery - time.Second)
		synctest.Wait()
		if v := volume(); v != 1 {
			t.Fatalf("a routine change written %v after the last write, after a step forward: volume %d", RoutineEvery-time.Second, v)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if v := volume(); v != 2 {
			t.Fatalf("a routine change not written %v after the last write: volume %d", RoutineEvery, v)
		}

		// A failure is dated by the wall clock, as a parent reads it.
		sv.path = filepath.Join(dir, FileName, "below-a-file")
		sv.Save(Saved{Volume: 3}, Urgent)
		time.Sleep(Settle)
		synctest.Wait()
		if since, err := sv.Err(); err == nil || !since.Equal(clk.Now()) {
			t.Errorf("failure since %v (%v), want %v", since, err, clk.Now())
		}
	})
}

// A failing disk is reported once per episode, kept visible with its start
// for the API, retried with the same state, and cleared when writing works
// again.
func TestFailuresAreReportedOncePerEpisode(t *testing.T) {
	root := t.TempDir()
	blocker := filepath.Join(root, "perm")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(blocker, "playerd") // below a file: every write fails
	var mu sync.Mutex
	var reports []error
	sv := NewSaver(dir, func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() })

	if since, err := sv.Err(); err != nil || !since.IsZero() {
		t.Fatalf("before any write: %v %v", since, err)
	}
	sv.Save(Saved{Volume: 7}, Urgent)
	sv.writeDue(true)
	since, err := sv.Err()
	if err == nil || since.IsZero() || fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("after a failed write: since %v, err %v", since, err)
	}
	if msg := fault.Message(err); !strings.HasPrefix(msg, "cannot save the player state") || strings.Contains(msg, root) {
		t.Errorf("message for the API %q: must name the failure, not the path", msg)
	}
	if sv.pending == nil || sv.pending.Volume != 7 || sv.due-sv.clock.Uptime() < RetryEvery-time.Second {
		t.Errorf("the failed state must be retried after %v: pending %+v, due in %v", RetryEvery, sv.pending, sv.due-sv.clock.Uptime())
	}
	sv.Save(Saved{Volume: 8}, Urgent)
	if sv.due-sv.clock.Uptime() < RetryEvery-time.Second {
		t.Errorf("while failing, a new change must wait for the retry, due in %v", sv.due-sv.clock.Uptime())
	}
	sv.writeDue(true)
	if again, _ := sv.Err(); !again.Equal(since) {
		t.Errorf("a second failure restarted the episode: %v, then %v", since, again)
	}

	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	sv.writeDue(true)
	if since, err := sv.Err(); err != nil || !since.IsZero() {
		t.Errorf("after a good write: %v %v", since, err)
	}
	if s, err := Load(dir); err != nil || s.Volume != 8 {
		t.Errorf("retried state on disk: volume %d %v, want 8", s.Volume, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 2 || reports[0] == nil || reports[1] != nil {
		t.Errorf("reports %v, want the error once, then nil once", reports)
	}
}

func TestSaveErrorNamesTheFailure(t *testing.T) {
	for errno, want := range map[syscall.Errno]string{
		syscall.ENOSPC: "storage is full",
		syscall.EROFS:  "storage is read-only",
		syscall.EACCES: "storage is not writable",
		syscall.EIO:    "storage error",
	} {
		err := saveError(&fs.PathError{Op: "open", Path: "/perm/playerd/.state.json.tmp-1", Err: errno})
		msg := fault.Message(err)
		if !strings.HasSuffix(msg, ": "+want) || strings.Contains(msg, "/perm") {
			t.Errorf("%v: %q, want %q and no path", errno, msg, want)
		}
		if !errors.Is(err, errno) {
			t.Errorf("%v: the cause is lost for the log", errno)
		}
	}
}
