// Package stream plays audio that arrives over HTTP: radio stations (live,
// endless, with ICY or Ogg titles) and podcast episodes (finite, seekable by
// byte ranges). A Source is a track for the player: a goroutine of its own
// connects, resolves playlists, decodes behind the decoder boundary and fills
// a jitter buffer of a few seconds; the player only ever takes what is
// buffered, so the network never blocks it. A dropped connection is retried
// with backoff while the buffer plays on.
package stream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

// Config is what all streams share.
type Config struct {
	Policy fetch.Policy
	// Client, when nil, is Policy's client with ReadTimeout.
	Client *http.Client
	// ReadTimeout: a server silent for this long has dropped the stream.
	// Zero means 10 s.
	ReadTimeout time.Duration
	// Prebuffer is the audio buffered before playback starts or resumes
	// after the buffer ran dry; Buffer is the most buffered ahead. Zero
	// means 2 s and 6 s.
	Prebuffer, Buffer time.Duration
	// Reconnect waits start at MinBackoff and double up to MaxBackoff; after
	// failing for GiveUp without a stretch of healthy audio, the stream is
	// given up. Zero means 1 s, 30 s, 10 min.
	MinBackoff, MaxBackoff, GiveUp time.Duration
	// IdleDrop: a station whose buffer stayed full this long is paused;
	// its connection is let go, and playing again starts live. Zero means
	// 15 s.
	IdleDrop time.Duration
	// OnRetry, when set, hears of each failed attempt and the wait before
	// the next (for the log). It is called from the stream's goroutine.
	OnRetry func(url string, err error, wait time.Duration)
}

// Defaults returns c with every zero field set to its default; the client
// is made once here, so sources prepared from it share its connections.
func (c Config) Defaults() Config { return c.withDefaults() }

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.ReadTimeout, 10*time.Second)
	def(&c.Prebuffer, 2*time.Second)
	def(&c.Buffer, 6*time.Second)
	def(&c.MinBackoff, time.Second)
	def(&c.MaxBackoff, 30*time.Second)
	def(&c.GiveUp, 10*time.Minute)
	def(&c.IdleDrop, 15*time.Second)
	if c.Client == nil {
		c.Client = c.Policy.Client(fetch.Options{ReadTimeout: c.ReadTimeout})
	}
	return c
}

// Options describe one track.
type Options struct {
	URL string
	// Live: a station. It has no duration, cannot seek, counts its position
	// from the start of listening and reports titles.
	Live bool
	// Duration of an episode in seconds, from its feed; 0 when unknown.
	Duration float64
	// Rate the source streams at (the player's output rate); what arrives
	// at another rate is resampled. 0 means output.DefaultRate.
	Rate int
}

// historyFrames is the audio kept after it was read, for Back: more than
// the largest device buffer the player writes ahead (16 periods).
const historyFrames = 32 * output.PeriodFrames

// healthySeconds of audio from one connection reset the backoff.
const healthySeconds = 10

// Source is one stream as a track for the player. Its methods are safe for
// concurrent use and never wait for the network.
type Source struct {
	cfg  Config
	opts Options

	mu      sync.Mutex
	ring    ring
	gen     int // changes with every (re)start; a stale goroutine's writes are dropped
	cancel  context.CancelFunc
	running bool
	waiting bool   // the buffer ran dry or is filling; silence meanwhile
	problem string // why the last attempt failed, while retrying
	failed  error  // given up for good
	ended   bool   // an episode's last byte was decoded
	closed  bool
	pos     int64 // frames: into the episode, or of listening to the station
	segs    []seg // what Stream gave lately, for Back
	marks   []mark
	title   *string
	notice  string        // how the stream plays, when less than it sends (decode.Live.Notice)
	space   chan struct{} // the player made room in the buffer
	stats   Stats
}

// seg is a run of frames Stream gave: audio, or silence while waiting.
type seg struct {
	silent bool
	n      int
}

// mark is a title that applies from a frame of the ring on.
type mark struct {
	at    int64
	title string
}

// Stats count what happened to a source, for tests and benchmarks.
type Stats struct {
	Connects  int           // successful connections
	Failures  int           // failed attempts and dropped connections
	LastRetry time.Duration // the last wait before reconnecting
}

// Open prepares a source; nothing touches the network until the player
// first asks it for audio.
func Open(cfg Config, o Options) *Source {
	if o.Rate <= 0 {
		o.Rate = output.DefaultRate
	}
	return &Source{cfg: cfg.withDefaults(), opts: o, waiting: true, space: make(chan struct{}, 1)}
}

func (s *Source) frames(d time.Duration) int {
	return int(d * time.Duration(s.opts.Rate) / time.Second)
}

// Stream gives the player what is buffered. While the network is behind it
// gives silence, so the device keeps its pace; it reports false only at the
// end of an episode or when an episode failed for good (Err).
func (s *Source) Stream(out [][2]float64) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || (s.failed != nil && !s.opts.Live) {
		return 0, false
	}
	if s.failed == nil && !s.running && !s.ended {
		s.start()
	}
	if s.waiting && (s.ring.ahead() >= s.frames(s.cfg.Prebuffer) || s.ended) {
		s.waiting = false
	}
	n := 0
	if !s.waiting {
		n = s.ring.read(out)
		s.pos += int64(n)
		s.note(false, n)
		for len(s.marks) > 0 && s.marks[0].at <= s.ring.rd {
			t := s.marks[0].title
			s.title = &t
			if t == "" {
				s.title = nil
			}
			s.marks = s.marks[1:]
		}
		if n > 0 {
			select {
			case s.space <- struct{}{}:
			default:
			}
		}
	}
	if n == len(out) {
		return n, true
	}
	if s.ended && s.ring.ahead() == 0 {
		return n, n > 0
	}
	if s.failed == nil {
		s.waiting = true // ran dry: fill up again before playing on
	}
	clear(out[n:])
	if s.opts.Live {
		s.pos += int64(len(out) - n) // a station's position is time spent listening
	}
	s.note(true, len(out)-n)
	return len(out), true
}

// note remembers what Stream gave, merging runs, as far back as Back needs.
func (s *Source) note(silent bool, n int) {
	if n == 0 {
		return
	}
	if k := len(s.segs); k > 0 && s.segs[k-1].silent == silent {
		s.segs[k-1].n += n
	} else {
		s.segs = append(s.segs, seg{silent, n})
	}
	total := 0
	for i := len(s.segs) - 1; i >= 0; i-- {
		if total += s.segs[i].n; total > historyFrames {
			s.segs[i].n -= total - historyFrames
			s.segs = s.segs[i:]
			break
		}
	}
}

// Back gives back the newest frames Stream gave that were not heard: they
// play again next. Silence given while waiting is simply forgotten.
func (s *Source) Back(frames int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for frames > 0 && len(s.segs) > 0 {
		last := &s.segs[len(s.segs)-1]
		k := min(frames, last.n)
		switch {
		case !last.silent:
			got := s.ring.back(k)
			s.pos -= int64(got)
			if s.opts.Live {
				s.pos -= int64(k - got)
			}
		case s.opts.Live:
			s.pos -= int64(k)
		}
		frames -= k
		if last.n -= k; last.n == 0 {
			s.segs = s.segs[:len(s.segs)-1]
		}
	}
	s.pos = max(s.pos, 0)
}

// Seek jumps within an episode; on a station only 0 is possible: listening
// starts over, live.
func (s *Source) Seek(sec float64) error {
	if s.opts.Live && sec != 0 {
		return fmt.Errorf("a radio station cannot seek")
	}
	if !s.opts.Live && s.opts.Duration > 0 {
		sec = max(0, min(sec, s.opts.Duration))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
	s.ring.reset()
	s.pos = int64(math.Round(sec * float64(s.opts.Rate))) // the nearest frame: sec is often a frame over the rate
	s.segs, s.marks, s.waiting, s.problem, s.ended, s.failed = nil, nil, true, "", false, nil
	if s.opts.Live {
		s.title = nil
	}
	return nil
}

// Seconds is the position: into the episode, or of listening to the station.
func (s *Source) Seconds() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return float64(s.pos) / float64(s.opts.Rate)
}

// Duration of an episode; 0 for a station or when unknown.
func (s *Source) Duration() float64 {
	if s.opts.Live {
		return 0
	}
	return s.opts.Duration
}

// Live reports a station.
func (s *Source) Live() bool { return s.opts.Live }

// Title is the station's current title as heard now, nil when it has none.
func (s *Source) Title() *string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.title
}

// Notice says how the stream plays when that is less than it sends: an
// HE-AAC station plays its AAC-LC core. "" otherwise.
func (s *Source) Notice() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notice
}

// Health says what the listener hears: buffering (the buffer is filling),
// a problem while retrying after the buffer ran dry, or a failure for good.
func (s *Source) Health() (buffering bool, problem string, failed error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return false, "", s.failed
	}
	if !s.waiting || s.ended {
		return false, "", nil
	}
	if s.problem != "" {
		return false, s.problem, nil
	}
	return true, "", nil
}

// Err is why an episode ended early.
func (s *Source) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// Stats reports the connection history.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Close ends the source and its goroutine; it does not wait for it.
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
	s.closed = true
	s.ring = ring{}
	return nil
}

// start runs a new goroutine for the stream from where the buffer ends.
func (s *Source) start() {
	if s.ring.buf == nil {
		s.ring = newRing(s.frames(s.cfg.Buffer) + historyFrames)
		s.ring.reset()
	}
	s.gen++
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.running = cancel, true
	from := float64(s.pos+int64(s.ring.ahead())) / float64(s.opts.Rate)
	go s.run(ctx, s.gen, from)
}

// stop ends the goroutine, if one runs.
func (s *Source) stop() {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
	s.running = false
	s.gen++
}

// errIdle ends a station's goroutine whose buffer stayed full: the player is
// paused.
var errIdle = errors.New("paused")

// put adds decoded frames to the buffer, waiting for room; titles apply
// from the end of frames on.
func (s *Source) put(ctx context.Context, gen int, frames [][2]float64, titles []string) error {
	var idleSince time.Time
	for len(frames) > 0 {
		s.mu.Lock()
		if s.gen != gen {
			s.mu.Unlock()
			return context.Canceled
		}
		s.problem = ""
		n := min(len(frames), s.ring.space(historyFrames))
		if n > 0 {
			s.ring.write(frames[:n])
			frames = frames[n:]
			idleSince = time.Time{}
		}
		if len(frames) == 0 {
			for _, t := range titles {
				s.marks = append(s.marks, mark{at: s.ring.wr, title: t})
			}
		}
		s.mu.Unlock()
		if len(frames) == 0 {
			return nil
		}
		if idleSince.IsZero() {
			idleSince = time.Now()
		}
		wait := s.cfg.IdleDrop - time.Since(idleSince)
		if !s.opts.Live {
			wait = time.Hour // an episode keeps its place in the stream
		}
		if wait <= 0 {
			return errIdle
		}
		t := time.NewTimer(wait)
		select {
		case <-s.space:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
	return nil
}

// settle records how the goroutine of gen ended.
func (s *Source) settle(gen int, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen == gen {
		f()
	}
}
