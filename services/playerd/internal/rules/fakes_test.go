package rules

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// fakePlayer is a player that obeys the gate as the real one does (Admit
// in front of every command, the verdict's cap, Commit after success) and
// plays tracks of given lengths in the test's time.
type fakePlayer struct {
	gate    player.Gate
	folders map[string][]float64 // track lengths in seconds

	mu      sync.Mutex
	st      player.Status
	since   time.Time // when st.Position was last brought up to date
	cap     int
	changed chan struct{}
	vols    []int        // every volume a volume command of the rules set
	pauses  int          // pauses the rules commanded
	held    player.State // the music's state during an announcement
	resumed int          // announcements the music came back after
}

// speak starts (on) or ends an announcement: running music is held, and
// returns to what commands meanwhile left it at, as the player does.
func (p *fakePlayer) speak(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advance()
	if on {
		p.held, p.st.Speaking = p.st.State, true
		if p.st.State == player.Playing {
			p.st.State = player.Paused
		}
	} else {
		p.st.State, p.st.Speaking = p.held, false
		if p.held == player.Playing {
			p.resumed++
		}
	}
	p.notify()
}

func newFakePlayer(g player.Gate, folders map[string][]float64) *fakePlayer {
	return &fakePlayer{gate: g, folders: folders, changed: make(chan struct{}),
		st: player.Status{State: player.Stopped, Index: -1, Volume: 50, MaxVolume: 100, Queue: []player.QueueItem{}}}
}

func (p *fakePlayer) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// advance plays on to now: tracks end and the next begins; after the last
// the player stops.
func (p *fakePlayer) advance() {
	now := time.Now()
	if p.st.State != player.Playing {
		p.since = now
		return
	}
	p.st.Position += now.Sub(p.since).Seconds()
	p.since = now
	for p.st.Position >= p.st.Duration {
		over := p.st.Position - p.st.Duration
		if p.st.Index+1 >= len(p.st.Queue) {
			p.st.State, p.st.Index, p.st.Position = player.Stopped, 0, 0
			p.st.Duration = p.st.Queue[0].Duration
			p.notify()
			return
		}
		p.st.Index++
		p.st.Duration, p.st.Position = p.st.Queue[p.st.Index].Duration, over
		p.notify()
	}
}

func (p *fakePlayer) Status() player.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advance()
	st := p.st
	st.Final = st.Index >= 0 && st.Index == len(st.Queue)-1 // the fake plays in order
	return st
}

func (p *fakePlayer) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

func (p *fakePlayer) clamp(v int) int {
	if p.cap > 0 {
		v = min(v, p.cap)
	}
	return max(0, min(v, 100))
}

func (p *fakePlayer) Do(ctx context.Context, c player.Command) (player.Status, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advance()
	a := player.Ask{Cmd: c, Playing: p.st.State == player.Playing || p.st.Speaking && p.held == player.Playing, FolderID: folderOf(p.st)}
	v, err := p.gate.Admit(ctx, a)
	if err != nil {
		return p.st, err
	}
	p.cap = v.MaxVolume
	p.st.MaxVolume = p.clamp(100)
	p.st.Volume = p.clamp(p.st.Volume)
	switch c.Action {
	case player.ActVolume:
		p.st.Volume = p.clamp(int(*c.Value))
		if auth.CallerFrom(ctx).Via == auth.Internal {
			p.vols = append(p.vols, p.st.Volume)
		}
	case player.ActVolumeDelta:
		p.st.Volume = p.clamp(p.st.Volume + int(*c.Value))
	case player.ActPause:
		if auth.CallerFrom(ctx).Via == auth.Internal {
			p.pauses++
		}
		if p.st.Speaking {
			p.held = player.Paused
		} else if p.st.State == player.Playing {
			p.st.State = player.Paused
		}
	case player.ActPlay, player.ActToggle:
		if p.st.State == player.Playing && c.Action == player.ActToggle {
			p.st.State = player.Paused
		} else if len(p.st.Queue) > 0 {
			p.st.State = player.Playing
		}
	case player.ActNext:
		if p.st.Index+1 < len(p.st.Queue) {
			p.st.Index++
			p.st.Position, p.st.Duration = 0, p.st.Queue[p.st.Index].Duration
		}
	case player.ActFolder, player.ActResume:
		tracks, ok := p.folders[c.FolderID]
		if !ok {
			return p.st, errors.New("unknown folder")
		}
		id := c.FolderID
		p.st.FolderID = &id
		p.st.Queue = nil
		for _, d := range tracks {
			p.st.Queue = append(p.st.Queue, player.QueueItem{Duration: d})
		}
		p.st.Index = 0
		if c.ItemIndex != nil {
			p.st.Index = *c.ItemIndex
		}
		p.st.Position, p.st.Duration = 0, tracks[p.st.Index]
		p.st.State = player.Playing
	}
	if v.Commit != nil {
		v.Commit()
	}
	p.notify()
	return p.st, nil
}

func (p *fakePlayer) rulePauses() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pauses
}

func (p *fakePlayer) volumes() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.vols...)
}

// Callers.
var (
	network = auth.WithCaller(context.Background(), auth.Caller{Via: auth.Network})
	touch   = auth.WithCaller(context.Background(), auth.Caller{Via: auth.Touch})
	admin   = auth.WithCaller(context.Background(), auth.Caller{Via: auth.Network, Admin: true})
)

func num(v float64) *float64 { return &v }
func index(i int) *int       { return &i }

// box is a Keeper running against a fakePlayer in a synctest bubble.
type box struct {
	t       *testing.T
	k       *Keeper
	p       *fakePlayer
	clock   *clocktest.Running
	mu      sync.Mutex
	saves   []saved
	changes []Restrictions
	said    int
	over    []Override
	cancel  context.CancelFunc
	done    chan struct{}
}

type saved struct {
	l state.Listening
	u state.Urgency
}

// newBox starts the rules at wall time start (in Berlin) with the folders
// given; edit may change the configuration first.
func newBox(t *testing.T, r Rules, start time.Time, folders map[string][]float64, edit ...func(*Config)) *box {
	t.Helper()
	b := &box{t: t, clock: clocktest.NewRunning(start), done: make(chan struct{})}
	loc := start.Location()
	cfg := Config{
		Rules: r, Clock: b.clock, Zone: func() *time.Location { return loc },
		Save: func(l state.Listening, u state.Urgency) {
			b.mu.Lock()
			b.saves = append(b.saves, saved{l, u})
			b.mu.Unlock()
		},
		OnChange: func(r Restrictions) {
			b.mu.Lock()
			b.changes = append(b.changes, r)
			b.mu.Unlock()
		},
		OnLimitReached: func(r *Refusal) {
			if r.Reason != ReasonDailyLimit {
				t.Errorf("limit reached with %+v", r)
			}
			b.mu.Lock()
			b.said++
			b.mu.Unlock()
		},
		OnOverride: func(o Override) { b.mu.Lock(); b.over = append(b.over, o); b.mu.Unlock() },
	}
	for _, e := range edit {
		e(&cfg)
	}
	b.k = NewKeeper(cfg)
	b.p = newFakePlayer(b.k, folders)
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	go func() {
		defer close(b.done)
		_ = b.k.Run(ctx, b.p)
	}()
	t.Cleanup(b.stop)
	return b
}

func (b *box) stop() {
	b.cancel()
	<-b.done
}

func (b *box) do(ctx context.Context, c player.Command) player.Status {
	b.t.Helper()
	st, err := b.p.Do(ctx, c)
	if err != nil {
		b.t.Fatalf("%s: %v", c.Action, err)
	}
	return st
}

// refused runs c and wants a refusal for reason.
func (b *box) refused(ctx context.Context, c player.Command, reason, msg string) *Refusal {
	b.t.Helper()
	_, err := b.p.Do(ctx, c)
	var r *Refusal
	if !errors.As(err, &r) || r.Reason != reason || msg != "" && r.Msg != msg {
		b.t.Fatalf("%s: err %v, want a %s refusal %q", c.Action, err, reason, msg)
	}
	return r
}

func (b *box) lastSave() saved {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.saves) == 0 {
		b.t.Fatal("nothing saved")
	}
	return b.saves[len(b.saves)-1]
}
