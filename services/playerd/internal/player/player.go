package player

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Catalog resolves folder ids to their tracks (the library).
type Catalog interface {
	Folder(id string) (library.Folder, bool)
}

// Config is what the player needs from its owner.
type Config struct {
	Open    output.Opener
	Catalog Catalog
	// MaxVolume caps every volume the player ever uses (1..100).
	MaxVolume int
	// MinVolume is the floor of every volume (0..MaxVolume; 0: none): no
	// button, card, screen or client turns the box quieter. A cap below
	// it (the night maximum) wins, and the parental rules' own commands
	// (auth.Internal: the sleep timer's fade) go below it, since the fade
	// ends in a pause and the volume then returns.
	MinVolume int
	// StartVolume caps the volume after a restart: the box never starts
	// louder than this, but stays quieter if it was left quieter.
	StartVolume int
	// AnnounceVolume is the volume of announcements, still capped by MaxVolume.
	AnnounceVolume int
	// Calm: a child's card or button does not cut a track off (calm.go).
	Calm bool
	// Restored is the state saved by the previous run.
	Restored state.Saved
	// Save receives a copy of the persistent state whenever it changed:
	// Urgent after a command changed it, Routine for each whole second of
	// position while playing. It must not block (the owner hands it to a
	// state.Saver, which decides when to write).
	Save func(state.Saved, state.Urgency)
	// OnSkip reports a track that could not be played and was skipped.
	OnSkip func(track library.Track, err error)
	// OnDevice reports sink failures and recoveries for the log.
	OnDevice func(err error)
	// Backend names the engine in the status.
	Backend string
	// OpenRemote opens stations and podcast episodes; nil: only files play.
	OpenRemote RemoteOpener
	// OnNowPlaying hears each change of the station's title (now_playing),
	// nil when it ends. It is called from the player goroutine and must
	// not block (the event feed hands it on).
	OnNowPlaying func(title *string)
	// Normalize is the mode of loudness normalisation (NormalizeModes;
	// empty: off, for tools and tests that play files as they are) and
	// Levels where the measured loudness of files is found (nil: nothing
	// is measured).
	Normalize string
	Levels    Levels
	// Gate judges every command and announcement before it runs (gate.go);
	// nil admits everything (tests and tools without parental rules).
	Gate Gate
	// FolderMode is the mode a parent set for a folder (modes.go); nil or
	// "" is ModeNormal. It is called in the player goroutine and must not
	// block.
	FolderMode func(id string) Mode
	// Rand draws the shuffled orders and random tracks; nil seeds one from
	// the clock. Tests give a seeded source.
	Rand rand.Source
}

const (
	rampFrames        = output.FadeFrames // 5 ms fades against clicks
	previousThreshold = 3.0               // seconds: previous restarts the track after this
	retryInterval     = time.Second
	resumeMinPosition = 5.0 // seconds: shorter listening is not worth a resume point
	maxAnnouncements  = 8
	announceRetry     = 5 * time.Second // a full announcement queue drains in about this long
)

// Player is the engine. Create it with New, start Run in one goroutine, and
// use the other methods from anywhere.
type Player struct {
	cfg  Config
	cmds chan request

	snap    atomic.Pointer[snapshot]
	mu      sync.Mutex
	changed chan struct{}
	closed  chan struct{}

	// Everything below is owned by the Run goroutine.
	out        *output.Stream // the open sink; nil until it opens
	rate       int            // what music and clips are rendered at: out's rate, or the last one
	want       int            // the rate to open the sink at: the own rate of the music
	asked      int            // the rate out was opened for
	sinkErr    error
	nextRetry  time.Time
	state      State
	folder     *library.Folder
	queue      []QueueItem
	index      int
	cur        *track
	volume     int
	gain       float64 // current linear gain, ramps towards the target
	fadeIn     int     // frames of fade-in still to apply
	lastErr    string
	saved      state.Saved
	dirty      bool
	lastSecond int
	buf        [][2]float64
	gains      []float64      // per-frame gains for buf
	clips      []*clip        // announcements; the first one is playing
	musicWas   State          // music state to return to after announcements
	jumps      uint64         // Status.Jumps
	gateMax    int            // the gate's volume cap; 0: none
	phones     *Headphones    // plugged in and playing; nil: the speaker plays
	normSnap   *Normalization // the last published Status.Normalize
	joins      []trackJoin    // where tracks began in the period rendered
	byRules    bool           // the request being run is the parental rules' own (no volume floor)
	waiting    *waiting       // calm mode's folder for when the track ends (calm.go)

	// The play modes of the queue (modes.go).
	mode      Mode   // the mode the queue started in
	shuffle   bool   // order is a random permutation
	repeat    string // RepeatOff, RepeatFolder or RepeatTrack
	stopAtEnd bool   // single, random_one: stop when the track ends
	order     []int  // play order of queue entries; nil: the queue's order
	rng       *rand.Rand

	queueGen    int // changes with the queue, so a stale prefetch is dropped
	prefetching bool
	ready       *prefetched
	prefetchC   chan prefetched
}

type request struct {
	ctx  context.Context // the caller's, for the gate
	cmd  Command
	clip *clip
	// change is an owner's change of the player's configuration or saved
	// state (owner.go), run in the player goroutine like a command.
	change func() error
	resp   chan response
}

type response struct {
	status Status
	err    error
}

// New prepares a player in the state the previous run saved.
func New(cfg Config) *Player {
	if cfg.MaxVolume < 1 || cfg.MaxVolume > 100 {
		cfg.MaxVolume = 100
	}
	cfg.MinVolume = max(0, min(cfg.MinVolume, cfg.MaxVolume))
	if cfg.Backend == "" {
		cfg.Backend = "storybox"
	}
	if cfg.Save == nil {
		cfg.Save = func(state.Saved, state.Urgency) {}
	}
	if cfg.OnSkip == nil {
		cfg.OnSkip = func(library.Track, error) {}
	}
	if cfg.OnDevice == nil {
		cfg.OnDevice = func(error) {}
	}
	if cfg.OnNowPlaying == nil {
		cfg.OnNowPlaying = func(*string) {}
	}
	if cfg.Rand == nil {
		seed := uint64(time.Now().UnixNano())
		cfg.Rand = rand.NewPCG(seed, seed>>32|seed<<32)
	}
	p := &Player{
		cfg:       cfg,
		cmds:      make(chan request),
		changed:   make(chan struct{}),
		closed:    make(chan struct{}),
		state:     Stopped,
		index:     -1,
		buf:       make([][2]float64, output.PeriodFrames),
		gains:     make([]float64, output.PeriodFrames),
		prefetchC: make(chan prefetched, 1),
		saved:     cfg.Restored.Clone(),
		rate:      output.DefaultRate,
		want:      output.DefaultRate,
		mode:      ModeNormal,
		repeat:    RepeatOff,
		rng:       rand.New(cfg.Rand),
	}
	p.volume = p.clampVolume(min(cfg.Restored.Volume, cfg.StartVolume))
	if cfg.Restored.Volume <= 0 && cfg.StartVolume > 0 {
		p.volume = p.clampVolume(cfg.StartVolume)
	}
	p.restoreQueue()
	p.gain = p.musicGain()
	p.publish(true)
	return p
}

// restoreQueue reloads the saved queue paused at its saved position.
func (p *Player) restoreQueue() {
	q := p.saved.Queue
	if q == nil {
		return
	}
	f, ok := p.cfg.Catalog.Folder(q.FolderID)
	if !ok || q.Index < 0 || q.Index >= len(f.Tracks) {
		p.saved.Queue = nil
		return
	}
	p.load(f)
	p.restoreModes(q)
	index := p.restoreIndex(f, q)
	if index >= len(f.Tracks) {
		return
	}
	p.index = index
	if err := p.openAt(index, q.Position); err != nil {
		p.index = index
		return
	}
	p.state = Paused
	if r := p.cur.ownRate(); r > 0 {
		p.want = output.RateFor(r) // Run opens the sink at it
	}
}

// Status returns the latest snapshot; it never blocks on the player.
func (p *Player) Status() Status { return p.snap.Load().status() }

// snapshot is a published Status. While a track plays, each period moves
// only the position: it is stored into the snapshot in place instead of a
// new snapshot being built.
type snapshot struct {
	st  Status
	pos atomic.Uint64 // math.Float64bits of the position
}

func (s *snapshot) status() Status {
	st := s.st
	st.Position = math.Float64frombits(s.pos.Load())
	return st
}

// Changed returns a channel that is closed at the next change of state,
// track, volume or whole second of position.
func (p *Player) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// Do runs one command and returns the status right after it.
func (p *Player) Do(ctx context.Context, cmd Command) (Status, error) {
	return p.send(ctx, request{cmd: cmd})
}

func (p *Player) send(ctx context.Context, r request) (Status, error) {
	r.ctx, r.resp = ctx, make(chan response, 1)
	select {
	case p.cmds <- r:
	case <-p.closed:
		return Status{}, ErrClosed
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
	select {
	case resp := <-r.resp:
		return resp.status, resp.err
	case <-p.closed:
		return Status{}, ErrClosed
	}
}

// Run owns the player until ctx ends; then it saves the state, silences the
// sink and returns.
func (p *Player) Run(ctx context.Context) error {
	defer close(p.closed)
	p.ensureSink()
	// wake ends a wait that a command may cut short: for room in a filled
	// device buffer while playing, or for the next try to open the sink.
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	for {
		var wait time.Duration // none: render now while playing, else no deadline
		switch {
		case p.out == nil:
			wait = max(time.Until(p.nextRetry), time.Nanosecond)
		case p.audible():
			if wait = p.out.Wait(time.Now()); wait == 0 {
				select {
				case r := <-p.cmds:
					p.handle(r)
				case <-ctx.Done():
					return p.shutdown()
				default:
					p.renderPeriod()
					p.persist(state.Routine)
				}
				continue
			}
		}
		var woke <-chan time.Time
		if wait > 0 {
			wake.Reset(wait)
			woke = wake.C
		}
		select {
		case r := <-p.cmds:
			wake.Stop()
			p.handle(r)
		case <-woke:
			if p.out == nil {
				p.ensureSink()
			}
		case <-ctx.Done():
			return p.shutdown()
		}
	}
}

func (p *Player) shutdown() error {
	p.silence()
	p.persist(state.Urgent)
	p.failClips(ErrClosed)
	p.dropPrefetch()
	if p.cur != nil {
		p.cur.close()
		p.cur = nil
	}
	var err error
	if p.out != nil {
		err = p.out.Close()
		p.out = nil
	}
	return err
}

// audible reports whether the player has something to render.
func (p *Player) audible() bool {
	return len(p.clips) > 0 || (p.state == Playing && p.cur != nil)
}

func (p *Player) handle(r request) {
	var err error
	if r.change != nil {
		err = r.change()
	} else {
		err = p.run(r)
	}
	// Before the answer: an acknowledged change is already on its way to
	// the disk.
	p.persist(state.Urgent)
	p.publish(true)
	r.resp <- response{status: p.Status(), err: err}
}

// run checks a request, asks the gate and carries it out.
func (p *Player) run(r request) error {
	p.byRules = r.ctx != nil && auth.CallerFrom(r.ctx).Via == auth.Internal
	defer func() { p.byRules = false }()
	if r.clip == nil {
		if err := checkFields(r.cmd); err != nil {
			return err
		}
	}
	v, err := p.admit(r)
	if err != nil {
		return err
	}
	switch {
	case r.clip != nil:
		err = p.enqueueClip(r.clip)
	case p.defers(r):
		// The gate's record (Commit) is for the start, when it comes.
		return p.wait(r)
	default:
		err = p.command(r.cmd)
		if err == nil && (r.cmd.Action == ActStop || r.cmd.Action == ActFolder || r.cmd.Action == ActResume) {
			p.waiting = nil
		}
	}
	if err == nil && v.Commit != nil {
		v.Commit()
	}
	return err
}

// ensureSink opens the sink if it is not open; failures are retried later.
// The sink may take another rate than asked for (a device that lacks it) or
// than before (one that came back different): the music follows its rate.
func (p *Player) ensureSink() {
	open := p.opener()
	if p.out != nil || open == nil {
		return
	}
	s, err := open(p.want)
	if err != nil {
		p.deviceFailed(err)
		return
	}
	p.out, p.asked = output.NewStream(s), p.want
	if r := p.out.Rate(); r != p.rate {
		p.rate = r
		if p.cur != nil {
			if err := p.cur.retarget(r); err != nil {
				p.cfg.OnSkip(p.trackAt(p.index), err)
			}
		}
	}
	if p.sinkErr != nil {
		p.cfg.OnDevice(nil)
		p.sinkErr = nil
		if p.state == Failed && p.cur != nil {
			p.state = Playing
			p.fadeIn = rampFrames
		}
		p.lastErr = ""
		p.publish(true)
	}
}

// matchRate is for a queue starting with the current track: the output is
// to run at the track's own rate (output.RateFor), so it plays as it is. The
// tracks after it are converted to that rate, which keeps an album gapless;
// a queue starting at another rate reopens the output. A station takes the
// rate it finds.
func (p *Player) matchRate() {
	if p.cur == nil || p.cur.ownRate() == 0 {
		return
	}
	p.want = output.RateFor(p.cur.ownRate())
	if len(p.clips) == 0 { // else when they are done (finishClip)
		p.syncRate()
	}
}

// syncRate reopens the output at the rate wanted when it was opened for
// another. The music is silent by now: the command that started the queue
// faded it out (silence) before, so closing the sink cuts nothing, and the
// music starts on the new one with its fade-in.
func (p *Player) syncRate() {
	if p.out == nil || p.asked == p.want {
		return
	}
	if err := p.out.Close(); err != nil {
		p.cfg.OnDevice(err)
	}
	p.out = nil
	p.ensureSink()
}

func (p *Player) deviceFailed(err error) {
	if p.out != nil {
		p.out.Close()
		p.out = nil
	}
	if p.sinkErr == nil || p.sinkErr.Error() != err.Error() {
		p.cfg.OnDevice(err)
	}
	p.sinkErr = err
	p.nextRetry = time.Now().Add(retryInterval)
	p.lastErr = fmt.Sprintf("audio output: %v", err)
	if p.state == Playing {
		p.state = Failed // recovers to Playing when the device returns
	}
	p.publish(true)
}

// publish stores a new snapshot; notify wakes Changed waiters.
func (p *Player) publish(notify bool) {
	st := Status{
		State:     p.state,
		Backend:   p.cfg.Backend,
		Queue:     p.queue,
		Index:     p.index,
		Volume:    p.volume,
		MaxVolume: p.maxVolume(),
		Output:    p.outputName(),
		Speaking:  len(p.clips) > 0,
		Error:     p.lastErr,
		Jumps:     p.jumps,
		Shuffle:   p.shuffle,
		Repeat:    p.repeat,
		Waiting:   p.waitingStatus(),
		Final:     p.final(),
		CanNext:   p.canNext(),
	}
	if st.Queue == nil {
		st.Queue = []QueueItem{}
	}
	if p.folder != nil {
		st.FolderID, st.Folder, st.Cover = &p.folder.ID, &p.folder.Name, p.folder.Cover
		st.Mode = p.mode
	}
	if p.cur != nil {
		st.Normalize = p.normalization()
		st.Position = p.cur.seconds()
		st.Duration = p.cur.duration
		if p.cur.remote != nil {
			p.remoteStatus(&st)
		}
	}
	if sec := int(st.Position); sec != p.lastSecond {
		p.lastSecond = sec
		notify = true
	}
	old := p.snap.Load()
	if old != nil {
		// A stream changes state and title by itself, not by a command.
		if old.st.State != st.State || old.st.Error != st.Error {
			notify = true
		}
		if !sameTitle(old.st.NowPlaying, st.NowPlaying) {
			notify = true
			p.cfg.OnNowPlaying(st.NowPlaying)
		}
	}
	if !notify && old != nil && SamePlayback(old.st, st) {
		old.pos.Store(math.Float64bits(st.Position))
		return
	}
	next := &snapshot{st: st}
	next.pos.Store(math.Float64bits(st.Position))
	p.snap.Store(next)
	if notify {
		p.mu.Lock()
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
	}
}

// persist hands the state to the saver when it changed; the position
// counts as changed once per whole second, so the saver hears of it about
// once a second while playing and decides itself how often to write.
func (p *Player) persist(u state.Urgency) {
	p.recordResume()
	var q *state.Queue
	if p.folder != nil && p.index >= 0 {
		pos := 0.0
		if p.cur != nil && !p.cur.live() { // a station starts live, never at a position
			pos = p.cur.seconds()
		}
		q = &state.Queue{FolderID: p.folder.ID, Index: p.index, Position: pos}
		p.saveModes(q)
		if p.index < len(p.folder.Tracks) {
			q.TrackID = p.folder.Tracks[p.index].ID
		}
	}
	if !p.dirty && sameSecond(q, p.saved.Queue) {
		return
	}
	p.dirty = false
	p.saved.Volume = p.volume
	p.saved.Queue = q
	p.cfg.Save(p.saved.Clone(), u)
}

// sameSecond reports whether two queues differ by less than a whole second
// of position.
func sameSecond(a, b *state.Queue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.FolderID == b.FolderID && a.Index == b.Index && a.TrackID == b.TrackID && int(a.Position) == int(b.Position) &&
		a.Mode == b.Mode && a.Shuffle == b.Shuffle && a.Repeat == b.Repeat && a.StopAtEnd == b.StopAtEnd && sameOrder(a.Order, b.Order)
}

// recordResume remembers where the current folder was left.
func (p *Player) recordResume() {
	if p.folder == nil || p.cur == nil || p.index < 0 || p.cur.item.ResumePolicy == library.ResumeNone {
		return
	}
	pos := p.cur.seconds()
	if p.index == 0 && pos < resumeMinPosition {
		return
	}
	if p.saved.Resume == nil {
		p.saved.Resume = map[string]state.ResumePoint{}
	}
	old, had := p.saved.Resume[p.folder.ID]
	if had && old.Index == p.index && int(old.Position) == int(pos) && old.Mode == string(p.mode) && sameOrder(old.Order, p.order) {
		return
	}
	p.saved.Resume[p.folder.ID] = state.ResumePoint{
		Index: p.index, TrackID: p.cur.item.ID, Position: pos, UpdatedAt: resumeStamp(time.Now(), p.saved.Resume),
		Mode: string(p.mode), Order: p.order,
	}
	p.recordEpisode(p.saved.Resume[p.folder.ID])
	p.dirty = true
}

// sameOrder reports whether a and b are the same play order: p.order is
// replaced whenever it changes, never changed in place, so the same array
// is the same order.
func sameOrder(a, b []int) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// resumeStamp dates a new resume point at now. The dates are an order (the
// home screen's places to continue, the podcast episode whose place goes
// first), so a new point is never dated before a saved one: after the wall
// clock stepped back, or before it is set (a Pi boots in 1970), the place
// just left would otherwise be the oldest, and the first one dropped.
func resumeStamp(now time.Time, saved map[string]state.ResumePoint) time.Time {
	now = now.UTC().Round(0)
	for _, rp := range saved {
		if !now.After(rp.UpdatedAt) {
			now = rp.UpdatedAt.Add(time.Millisecond)
		}
	}
	return now
}

func invalid(format string, a ...any) error { return fault.New(fault.Invalid, format, a...) }

func conflict(format string, a ...any) error { return fault.New(fault.Conflict, format, a...) }
