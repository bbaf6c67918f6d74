package state

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/clock"
)

// FileName is the player state file inside the data directory.
const FileName = "state.json"

// Load reads the saved player state. A missing file is a first start; a
// corrupt one is reported (for the log) and replaced by defaults.
func Load(dataDir string) (Saved, error) {
	var s Saved
	err := ReadJSON(filepath.Join(dataDir, FileName), &s)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil {
		s = Saved{}
	}
	if s.Resume == nil {
		s.Resume = map[string]ResumePoint{}
	}
	return s, err
}

// Urgency says how soon a change must reach the disk.
type Urgency int

const (
	// Routine is the running position while playing: on disk within 10 s.
	Routine Urgency = iota
	// Urgent is anything a person did (volume, pause, stop, folder, next,
	// previous, seek): on disk within 1 s of being acknowledged.
	Urgent
)

// The write schedule, and with it the wear on the SD card. A write is one
// small file (state.json: 0.15 KB plus 0.2 KB per folder with a resume
// point), written, fsynced, renamed and the directory fsynced: about four
// 4 KB blocks with ext4's journal, ~16 KB.
//   - Urgent changes wait Settle for more changes, so a turn of the volume
//     knob or a burst of commands is one write; writes start at least Settle
//     apart: at most ~3 a second, and only while someone is at the box. The
//     worst case to disk is Settle plus a write in progress plus its own
//     write, well under 1 s on an SD card.
//   - Routine changes (the player reports every whole second of position)
//     are written RoutineEvery after the previous write: 450 writes, ~7 MB,
//     an hour of playing. Ten hours a day is ~25 GB a year before the card's
//     own write amplification, small against the terabytes a cheap card's
//     wear levelling spreads. Paused or stopped, nothing is written.
//   - While writes fail, they are retried every RetryEvery.
//
// The schedule runs on the process's monotonic time (the uptime of the
// saver's clock): network time stepping the wall clock by a year neither
// holds a write back nor writes early. Only the start of a failure, shown
// to a parent, is a wall-clock time.
const (
	Settle       = 300 * time.Millisecond
	RoutineEvery = 8 * time.Second // plus up to 1 s of report granularity: under 10 s
	RetryEvery   = 5 * time.Second
)

// Saver writes the state in its own goroutine, so the player never waits for
// the SD card. The player reports each change with its urgency; the saver
// keeps only the newest state and writes it when the most urgent change it
// holds is due.
type Saver struct {
	path   string
	report func(error)
	wake   chan struct{}
	done   chan struct{}
	// clock is the machine's, also when the box runs on a test's clock:
	// the schedule is about the SD card, in real time.
	clock clock.Clock

	mu        sync.Mutex
	pending   *Saved
	due       time.Duration // uptime when pending must be written
	lastWrite time.Duration // uptime at the end of the last write attempt
	wrote     bool          // lastWrite is set
	failed    error         // the last write's error; nil after a success
	since     time.Time     // wall clock at the start of the current failure episode
}

// NewSaver writes to dataDir/state.json. report is called once when saving
// starts failing, with the error, and once with nil when it works again; it
// must not block.
//
// The temporary files of writes a power cut interrupted are not its to
// remove: the data directory's owner sweeps them all before anything
// writes (RemoveAllTemps).
func NewSaver(dataDir string, report func(error)) *Saver {
	if report == nil {
		report = func(error) {}
	}
	return &Saver{
		path:   filepath.Join(dataDir, FileName),
		report: report,
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		clock:  clock.NewSystem(),
	}
}

// Save queues s, replacing a state that was not written yet, to be written
// as soon as u asks (or sooner, for an earlier change that is more urgent).
// It never blocks on the disk.
func (sv *Saver) Save(s Saved, u Urgency) {
	sv.mu.Lock()
	due := dueAt(u, sv.clock.Uptime(), sv.lastWrite, sv.wrote)
	if sv.failed != nil {
		due = max(due, sv.lastWrite+RetryEvery)
	}
	// Run sleeps until the due time of a pending state: it need only hear
	// of a state when that time is new (the player's report of each second
	// replaces a pending one and would otherwise wake it every second).
	rearm := sv.pending == nil || due < sv.due
	if rearm {
		sv.due = due
	}
	sv.pending = &s
	sv.mu.Unlock()
	if !rearm {
		return
	}
	select {
	case sv.wake <- struct{}{}:
	default:
	}
}

// dueAt is when (in uptime) a change of urgency u, made at now, must be
// written, given the end of the last write, if there was one.
func dueAt(u Urgency, now, lastWrite time.Duration, wrote bool) time.Duration {
	due := now + Settle
	if u == Routine && wrote {
		due = max(due, lastWrite+RoutineEvery)
	}
	return due
}

// Err returns why the last write failed and since when writes have been
// failing; err is nil when the last write succeeded. err is of kind
// fault.Unavailable, and fault.Message(err) names the failure without paths
// (e.g. "cannot save the player state: storage is full"), for the API.
func (sv *Saver) Err() (since time.Time, err error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.failed == nil {
		return time.Time{}, nil
	}
	return sv.since, sv.failed
}

// Run writes queued states when they are due, until ctx ends.
func (sv *Saver) Run(ctx context.Context) {
	defer close(sv.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		sv.mu.Lock()
		var fire <-chan time.Time
		if sv.pending != nil {
			timer.Reset(sv.due - sv.clock.Uptime())
			fire = timer.C
		}
		sv.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-sv.wake:
		case <-fire:
			sv.writeDue(false)
		}
	}
}

// Flush writes a state that is still queued, due or not; call it after the
// player has stopped and Run has returned.
func (sv *Saver) Flush() {
	<-sv.done
	sv.writeDue(true)
}

// writeDue writes the pending state if it is due (any pending state when
// forced).
func (sv *Saver) writeDue(force bool) {
	sv.mu.Lock()
	s := sv.pending
	if s == nil || !force && sv.clock.Uptime() < sv.due {
		sv.mu.Unlock()
		return
	}
	sv.pending = nil
	sv.mu.Unlock()

	err := WriteJSON(sv.path, *s)

	sv.mu.Lock()
	sv.lastWrite, sv.wrote = sv.clock.Uptime(), true
	wasFailing := sv.failed != nil
	if err == nil {
		sv.failed = nil
	} else {
		sv.failed = saveError(err)
		if !wasFailing {
			sv.since = sv.clock.Now()
		}
		if sv.pending == nil {
			sv.pending = s // nothing newer: try this one again
		}
		sv.due = max(sv.due, sv.lastWrite+RetryEvery)
	}
	failed := sv.failed
	sv.mu.Unlock()
	switch {
	case failed != nil && !wasFailing:
		sv.report(failed)
	case failed == nil && wasFailing:
		sv.report(nil)
	}
}

// saveError names why a write failed in words for a client, keeping the
// cause (with its paths) for the log.
func saveError(err error) error {
	msg := "cannot save the player state"
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		msg += ": storage is full"
	case errors.Is(err, syscall.EROFS):
		msg += ": storage is read-only"
	case errors.Is(err, fs.ErrPermission):
		msg += ": storage is not writable"
	case errors.Is(err, syscall.EIO):
		msg += ": storage error"
	}
	return fault.Wrap(fault.Unavailable, err, msg)
}
