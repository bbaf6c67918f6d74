// Package events is the box's one event feed. The core publishes typed
// events to one Bus: the player (through playerfeed), library scans, and
// every owner of state through the notifier the core hands it (box's
// notifiers); GET /api/events, the screen, MPRIS and the home-automation
// WebSocket read them.
//
// The Bus never waits for a reader. Events go into one bounded ring; each
// subscriber reads it at its own pace through a cursor, and one that falls
// so far behind that the events it has not read yet are gone is dropped
// (ErrSlow). A publisher pays the same whatever the readers do: encoding its
// payload once and a wake-up.
//
// Ids increase by one per event. They start at a random number each time
// the box starts, so that a client reconnecting with an id from before a
// restart is told to start over (Resume) instead of being handed unrelated
// events that happen to carry the ids it asked for.
//
// Everything published is readable by anyone on the home network: GET
// /api/events is as open as GET /api/status. A payload carries only what an
// unauthenticated client may read; a change in the admin area publishes what
// changed, never the values (KindSettings names a section).
package events

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Kind names what an event is about; it is the SSE event name.
type Kind string

// The kinds a Bus accepts. docs/api.md describes each payload (a test
// checks that every kind is there).
const (
	// Player (published by playerfeed from the player's snapshots).
	KindState      Kind = "state"       // playing, paused, stopped, error
	KindQueue      Kind = "queue"       // a new queue (folder)
	KindTrack      Kind = "track"       // another track of the queue
	KindVolume     Kind = "volume"      // volume or max_volume
	KindSeek       Kind = "seek"        // the position jumped (seek, restart)
	KindNowPlaying Kind = "now_playing" // a stream's title
	KindSpeech     Kind = "speech"      // an announcement started or finished
	KindOutput     Kind = "output"      // the speaker or the headphones play
	KindWaiting    Kind = "waiting"     // calm mode holds a folder back, or no longer
	KindModes      Kind = "modes"       // shuffle, repeat or the folder's mode
	// The rest of the box.
	KindMessage      Kind = "message"      // a message shown on screen or cleared
	KindBattery      Kind = "battery"      // the battery level (ok, low, critical)
	KindLibrary      Kind = "library"      // a library scan finished
	KindScan         Kind = "scan"         // a library scan started, got further or ended
	KindRestrictions Kind = "restrictions" // a parental rule began or ended
	KindSettings     Kind = "settings"     // a section of the settings changed
	KindCatalog      Kind = "catalog"      // folders, stations, podcasts or covers changed outside a scan
)

// Kinds that streams write themselves and that are never published: the
// full status a stream starts with, and the notice that events were lost.
const (
	KindStatus Kind = "status"
	KindReset  Kind = "reset"
)

var published = map[Kind]bool{
	KindState: true, KindQueue: true, KindTrack: true, KindVolume: true, KindSeek: true,
	KindNowPlaying: true, KindSpeech: true, KindOutput: true, KindWaiting: true, KindMessage: true, KindBattery: true,
	KindLibrary: true, KindScan: true, KindRestrictions: true, KindSettings: true,
	KindCatalog: true, KindModes: true,
}

// Sources of a KindCatalog change.
const (
	CatalogLibrary = "library" // the media library: a folder, an upload, a cover
	CatalogRadio   = "radio"   // the parent's stations and podcasts, or a feed
)

// CatalogChange is the payload of KindCatalog.
type CatalogChange struct {
	Source string `json:"source"`
}

// Kinds lists every kind a client can receive, published or written by a
// stream.
func Kinds() []Kind {
	out := []Kind{KindStatus, KindReset}
	for k := range published {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Event is one published change. Treat it as read-only: all subscribers
// share it.
type Event struct {
	ID      uint64
	Kind    Kind
	Time    time.Time
	Payload any             // as published
	Data    json.RawMessage // Payload as JSON, encoded once for every reader
}

// Errors of a Subscription.
var (
	// ErrSlow: the subscriber fell behind by more than the Bus keeps and
	// was dropped. It may subscribe again and re-read the state.
	ErrSlow = errors.New("events: subscriber too slow, dropped")
	// ErrClosed: the subscription was closed.
	ErrClosed = errors.New("events: subscription closed")
)

// Config bounds a Bus. Zero values mean the defaults.
type Config struct {
	// Keep is how many recent events the Bus holds for replay and for
	// subscribers that lag (default 256); KeepBytes caps their encoded
	// size (default 256 KiB; the newest event is always kept). A
	// subscriber more than this behind is dropped.
	Keep      int
	KeepBytes int
	// FirstID is the first event's id; 0 picks a random one (see the
	// package comment). Tests set it.
	FirstID uint64
	Now     func() time.Time
}

// Stats tell what a Bus did.
type Stats struct {
	LastID      uint64 `json:"last_id"`     // the newest event's id
	Subscribers int    `json:"subscribers"` // open subscriptions
	Dropped     uint64 `json:"dropped"`     // subscribers dropped for being too slow
	Kept        int    `json:"kept"`        // events held for replay
	KeptBytes   int    `json:"kept_bytes"`  // their encoded size
}

// Bus is the event feed. Its methods are safe for concurrent use.
type Bus struct {
	cfg Config

	mu     sync.Mutex
	ring   []*Event // circular, len == cfg.Keep; ring[(first+i)%Keep]
	head   int      // index of the oldest kept event
	n      int      // events kept
	bytes  int
	last   uint64 // id of the newest event; first id - 1 before any
	wake   chan struct{}
	subs   map[*Subscription]struct{}
	drops  uint64
	closed bool
}

// maxFirstID keeps ids exact in JavaScript numbers (2^53) for as long as
// any box will run.
const maxFirstID = 1 << 48

// New returns an empty Bus.
func New(cfg Config) *Bus {
	if cfg.Keep <= 0 {
		cfg.Keep = 256
	}
	if cfg.KeepBytes <= 0 {
		cfg.KeepBytes = 256 << 10
	}
	if cfg.FirstID == 0 {
		cfg.FirstID = 1 + rand.Uint64N(maxFirstID)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Bus{
		cfg:  cfg,
		ring: make([]*Event, cfg.Keep),
		last: cfg.FirstID - 1,
		wake: make(chan struct{}),
		subs: make(map[*Subscription]struct{}),
	}
}

// Publish sends payload to every subscriber as an event of kind k. It never
// blocks on a subscriber. The payload must encode as JSON; an unknown kind
// or a payload that does not encode is refused (fault.Invalid) and nothing
// is published.
func (b *Bus) Publish(k Kind, payload any) error {
	if !published[k] {
		return fault.New(fault.Invalid, "events: unknown kind %q", k)
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return fault.Wrap(fault.Invalid, err, "events: payload of "+string(k))
	}
	ev := &Event{Kind: k, Time: b.cfg.Now(), Payload: payload, Data: data}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last++
	ev.ID = b.last
	b.keep(ev)
	b.wakeAll()
	return nil
}

// wakeAll closes the channel Ready handed out. Called with mu held.
func (b *Bus) wakeAll() {
	close(b.wake)
	b.wake = make(chan struct{})
}

// keep adds ev to the ring, evicting the oldest events beyond the bounds
// and dropping subscribers that had not read them. Called with mu held.
func (b *Bus) keep(ev *Event) {
	if b.n == len(b.ring) {
		b.evict()
	}
	b.ring[(b.head+b.n)%len(b.ring)] = ev
	b.n++
	b.bytes += len(ev.Data)
	for b.n > 1 && b.bytes > b.cfg.KeepBytes {
		b.evict()
	}
}

func (b *Bus) evict() {
	old := b.ring[b.head]
	b.ring[b.head] = nil
	b.head = (b.head + 1) % len(b.ring)
	b.n--
	b.bytes -= len(old.Data)
	for s := range b.subs {
		if s.next <= old.ID {
			s.drop(ErrSlow)
			b.drops++
		}
	}
}

// oldest is the id of the oldest kept event (last+1 when none is kept).
// Called with mu held.
func (b *Bus) oldest() uint64 { return b.last + 1 - uint64(b.n) }

// Subscribe returns a subscription to the events published from now on.
func (b *Bus) Subscribe() *Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subscribe(b.last)
}

// Resume returns a subscription to the events after id after, as far as
// the Bus still holds them. When it holds all of them, ok is true and the
// subscription replays them first. Otherwise (too old, or an id this Bus
// never gave: another run of the box) ok is false and the subscription
// starts from now, as Subscribe's: the caller must re-read the state.
func (b *Bus) Resume(after uint64) (s *Subscription, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if after > b.last || after+1 < b.oldest() {
		return b.subscribe(b.last), false
	}
	return b.subscribe(after), true
}

func (b *Bus) subscribe(after uint64) *Subscription {
	s := &Subscription{b: b, from: after, next: after + 1, done: make(chan struct{})}
	b.subs[s] = struct{}{}
	if b.closed {
		s.drop(ErrClosed)
	}
	return s
}

// Close ends every subscription (ErrClosed), present and future, so that
// long-lived readers such as event streams end when the box shuts down.
// Publishing goes on working, for nobody.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		s.drop(ErrClosed)
	}
	b.wakeAll()
}

// Stats returns the counters so far.
func (b *Bus) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{LastID: b.last, Subscribers: len(b.subs), Dropped: b.drops, Kept: b.n, KeptBytes: b.bytes}
}

// Subscription reads a Bus. Its methods are for one goroutine, except
// Close, Done and Err, which any goroutine may call.
type Subscription struct {
	b    *Bus
	from uint64
	// Guarded by b.mu.
	next uint64 // id of the next event to read
	err  error
	done chan struct{}
}

// From is the id of the last event before the subscription's first: a
// client that has the state as of From and reads every event after it is
// up to date.
func (s *Subscription) From() uint64 { return s.from }

// Next returns the next event without waiting, or nil when there is none
// yet. After the subscription was dropped or closed it returns ErrSlow or
// ErrClosed.
func (s *Subscription) Next() (*Event, error) {
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	if s.next > b.last {
		return nil, nil
	}
	ev := b.ring[(b.head+int(s.next-b.oldest()))%len(b.ring)]
	s.next++
	return ev, nil
}

// Ready returns a channel that is closed when an event is published or the
// subscription ends (also when another goroutine closes it). Take it before the call to Next that returned nil,
// then wait on it: an event published in between is not missed.
func (s *Subscription) Ready() <-chan struct{} {
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.err != nil {
		return s.done
	}
	return b.wake
}

// Done is closed when the subscription ends: dropped or closed.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err tells why the subscription ended (ErrSlow, ErrClosed), or nil.
func (s *Subscription) Err() error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.err
}

// Close ends the subscription; the Bus forgets it.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if s.err == nil {
		s.drop(ErrClosed)
		s.b.wakeAll() // its reader may be waiting in another goroutine
	}
}

// drop ends s with err. Called with b.mu held.
func (s *Subscription) drop(err error) {
	s.err = err
	delete(s.b.subs, s)
	close(s.done)
}
