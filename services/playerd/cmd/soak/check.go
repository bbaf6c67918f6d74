package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// gate is the box's lives as every client sees them. Requests hold it for
// reading; a restart holds it for writing, so that no client changes
// anything between a kill and the check of what survived it. A kill itself
// takes no lock: it lands in the middle of whatever runs.
type gate struct {
	mu   sync.RWMutex
	life atomic.Int64
	down atomic.Bool // killed and not yet ready again
}

// enter waits while the box restarts and returns its life.
func (g *gate) enter() int {
	g.mu.RLock()
	return int(g.life.Load())
}

func (g *gate) leave() { g.mu.RUnlock() }

// interrupted tells whether a request sent in life has met a kill.
func (g *gate) interrupted(life int) bool {
	return g.down.Load() || int(g.life.Load()) != life
}

// violation is one thing the box did that it must not.
type violation struct {
	at   time.Time
	life int
	kind string // "5xx", "status", "transport", "lost", "restore", "stream", "p99", "trend", ...
	what string
}

// recorder keeps every answer's outcome by operation, the pollers'
// latencies, and the violations.
type recorder struct {
	log   *slog.Logger
	start time.Time

	mu         sync.Mutex
	ops        map[string]*opStats
	violations []violation
	polls      []poll // the pollers' status requests
	counts     map[string]int
	restarts   []restart
	hidden     []int // hidden files in the upload folders after each start
}

// restart is one start after a kill: from the start to the API ready.
type restart struct {
	took time.Duration
	why  string
}

type opStats struct {
	n           int
	codes       map[int]int
	interrupted int // met a kill
}

// poll is one poller's status request.
type poll struct {
	at      time.Time
	latency time.Duration
	who     string
}

func newRecorder(log *slog.Logger) *recorder {
	return &recorder{log: log, start: time.Now(), ops: map[string]*opStats{}, counts: map[string]int{}}
}

func (r *recorder) violate(life int, kind, format string, a ...any) {
	v := violation{at: time.Now(), life: life, kind: kind, what: fmt.Sprintf(format, a...)}
	r.mu.Lock()
	r.violations = append(r.violations, v)
	n := len(r.violations)
	r.mu.Unlock()
	if n <= 200 { // the rest are in the report's counts
		r.log.Error("violation", "kind", kind, "life", life, "what", truncate(v.what, 600))
	}
}

// count adds to a named counter for the report (cards read, kills, ...).
func (r *recorder) count(name string, n int) {
	r.mu.Lock()
	r.counts[name] += n
	r.mu.Unlock()
}

func (r *recorder) op(name string) *opStats {
	s := r.ops[name]
	if s == nil {
		s = &opStats{codes: map[int]int{}}
		r.ops[name] = s
	}
	return s
}

// judge records one answer of operation op and checks it against the
// rules every answer is held to, and against ok, the statuses this
// request may have. It reports whether the answer may be used.
func (r *recorder) judge(life int, op string, a *answer, ok []int) bool {
	r.mu.Lock()
	s := r.op(op)
	s.n++
	if a.err != nil {
		if a.interrupted {
			s.interrupted++
		}
	} else {
		s.codes[a.code]++
	}
	r.mu.Unlock()
	if a.err != nil {
		if !a.interrupted {
			r.violate(life, "transport", "%s: %v while the box was up (after %v)", op, a.err, a.got.Sub(a.sent).Round(time.Millisecond))
		}
		return false
	}
	retry := a.hdr.Get("Retry-After")
	switch {
	case a.code == http.StatusServiceUnavailable || a.code == http.StatusTooManyRequests:
		if retry == "" {
			r.violate(life, "retry-after", "%s: %d without Retry-After: %.200s", op, a.code, a.body)
		}
		return false
	case a.code >= 500:
		r.violate(life, "5xx", "%s: %d %.300s", op, a.code, a.body)
		return false
	case !slices.Contains(ok, a.code):
		r.violate(life, "status", "%s: %d %.300s (want one of %v)", op, a.code, a.body, ok)
		return false
	}
	return true
}

func (r *recorder) addPoll(who string, at time.Time, latency time.Duration) {
	r.mu.Lock()
	r.polls = append(r.polls, poll{at: at, latency: latency, who: who})
	r.mu.Unlock()
}

// opTable is the answers by operation for the report: count, statuses,
// requests a kill interrupted.
func (r *recorder) opTable() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.ops))
	for n := range r.ops {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		s := r.ops[n]
		var codes []string
		keys := make([]int, 0, len(s.codes))
		for c := range s.codes {
			keys = append(keys, c)
		}
		sort.Ints(keys)
		for _, c := range keys {
			codes = append(codes, fmt.Sprintf("%d×%d", s.codes[c], c))
		}
		out = append(out, fmt.Sprintf("| `%s` | %d | %s | %d |", n, s.n, strings.Join(codes, ", "), s.interrupted))
	}
	return out
}

func (r *recorder) snapshotViolations() []violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.violations)
}

func (r *recorder) snapshotPolls() []poll {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.polls)
}

func (r *recorder) snapshotCounts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

func (r *recorder) addRestart(took time.Duration, why string) {
	r.mu.Lock()
	r.restarts = append(r.restarts, restart{took, why})
	r.mu.Unlock()
}

func (r *recorder) setHidden(n int) {
	r.mu.Lock()
	r.hidden = append(r.hidden, n)
	r.mu.Unlock()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
