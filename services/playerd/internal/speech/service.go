package speech

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Announcer plays a clip over the music (the player engine's Announce): it
// returns once the clip has started; done closes when it has been played.
type Announcer interface {
	Announce(ctx context.Context, pcm [][2]float64) (done <-chan struct{}, err error)
}

// Config is what the Service needs from its owner.
type Config struct {
	Voice Voice
	// Fallback renders when Voice fails (a speech server on the LAN that
	// is down: Voice = RemoteVoice, Fallback = ExecVoice). May be nil.
	Fallback Voice
	Cache    *Cache // nil: every announcement is rendered
	Player   Announcer
	// Settings returns the box's current voice settings; nil means defaults.
	Settings func() Settings
	// QueueSize bounds the announcements waiting behind the one in
	// progress; 0 means 8.
	QueueSize int
	// StartWait bounds how long Speak waits for the speech to start
	// (rendering a new sentence can take seconds on a Pi); 0 means 8 s.
	StartWait time.Duration
	// OnError reports failures nobody waits for any more (the request had
	// already been answered) and cache write failures, for the log.
	OnError func(error)
}

// Result tells how far an announcement got when Speak returned.
type Result struct {
	// Speaking: the announcement has started playing.
	Speaking bool
	// Queued: it is still waiting or rendering after StartWait and will
	// play later.
	Queued bool
	// Cached: its audio came from the cache.
	Cached bool
}

// Service queues announcements and plays them one at a time, in order, with
// a single worker (Run).
type Service struct {
	cfg      Config
	jobs     chan *job
	closed   chan struct{}
	speaking atomic.Bool
}

type job struct {
	req       Request
	started   chan error // buffered; receives at most one value
	cached    atomic.Bool
	abandoned atomic.Bool // Speak stopped waiting
}

// NewService prepares a service; start Run in one goroutine.
func NewService(cfg Config) *Service {
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 8
	}
	if cfg.StartWait <= 0 {
		cfg.StartWait = 8 * time.Second
	}
	if cfg.Settings == nil {
		cfg.Settings = func() Settings { return Settings{} }
	}
	if cfg.OnError == nil {
		cfg.OnError = func(error) {}
	}
	return &Service{cfg: cfg, jobs: make(chan *job, cfg.QueueSize), closed: make(chan struct{})}
}

// Speaking reports whether an announcement is playing.
func (s *Service) Speaking() bool { return s.speaking.Load() }

// Speak is api.Speaker: started is true once the announcement plays, false
// when after StartWait it is still rendering or waiting (it plays later).
func (s *Service) Speak(ctx context.Context, text, language string) (started bool, err error) {
	r, err := s.SpeakResult(ctx, text, language)
	return r.Speaking, err
}

// SpeakResult queues text, spoken in language (empty: the configured one), and
// waits until it starts playing, at most StartWait. Errors: ErrEmpty,
// ErrTooLong, ErrLanguage (the caller's fault), ErrUnavailable, ErrBusy,
// ErrClosed, or a rendering/playback failure.
func (s *Service) SpeakResult(ctx context.Context, text, language string) (Result, error) {
	req, err := s.request(text, language)
	if err != nil {
		return Result{}, err
	}
	if err := s.available(); err != nil {
		return Result{}, err
	}
	j := &job{req: req, started: make(chan error, 1)}
	select {
	case <-s.closed:
		return Result{}, ErrClosed
	default:
	}
	select {
	case s.jobs <- j:
	default:
		return Result{}, fmt.Errorf("%w (%d)", ErrBusy, cap(s.jobs))
	}
	t := time.NewTimer(s.cfg.StartWait)
	defer t.Stop()
	select {
	case err := <-j.started:
		if err != nil {
			return Result{}, err
		}
		return Result{Speaking: true, Cached: j.cached.Load()}, nil
	case <-t.C:
	case <-ctx.Done():
	}
	j.abandoned.Store(true)
	select {
	case err := <-j.started:
		if err != nil {
			return Result{}, err
		}
		return Result{Speaking: true, Cached: j.cached.Load()}, nil
	default:
		return Result{Queued: true}, nil
	}
}

// voices lists the configured voices in the order they are tried.
func (s *Service) voices() []Voice {
	var vs []Voice
	for _, v := range []Voice{s.cfg.Voice, s.cfg.Fallback} {
		if v != nil {
			vs = append(vs, v)
		}
	}
	return vs
}

// available returns nil if some voice can render, else why none can.
func (s *Service) available() error {
	err := error(ErrUnavailable)
	for _, v := range s.voices() {
		if err = v.Available(); err == nil {
			return nil
		}
	}
	return err
}

func (s *Service) request(text, language string) (Request, error) {
	text, err := NormalizeText(text)
	if err != nil {
		return Request{}, err
	}
	set := s.cfg.Settings()
	if language != "" {
		set.Language = language
	}
	set, err = set.Normalized()
	if err != nil {
		return Request{}, err
	}
	return Request{Text: text, Settings: set}, nil
}

// Run is the worker: it renders and plays queued announcements until ctx is
// cancelled, then fails whatever is still waiting with ErrClosed.
func (s *Service) Run(ctx context.Context) error {
	defer func() {
		close(s.closed)
		for {
			select {
			case j := <-s.jobs:
				j.started <- ErrClosed
			default:
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case j := <-s.jobs:
			s.play(ctx, j)
		}
	}
}

func (s *Service) play(ctx context.Context, j *job) {
	pcm, cached, err := s.prepare(ctx, j.req)
	if err != nil {
		s.fail(j, err)
		return
	}
	j.cached.Store(cached)
	done, err := s.cfg.Player.Announce(ctx, pcm)
	if err != nil {
		s.fail(j, fmt.Errorf("play announcement: %w", err))
		return
	}
	s.speaking.Store(true)
	j.started <- nil
	select {
	case <-done:
	case <-ctx.Done():
	}
	s.speaking.Store(false)
}

func (s *Service) fail(j *job, err error) {
	j.started <- err
	if j.abandoned.Load() {
		s.cfg.OnError(err)
	}
}

// prepare returns the clip for r from the first voice that has it cached or
// can render it.
func (s *Service) prepare(ctx context.Context, r Request) (pcm [][2]float64, cached bool, err error) {
	err = ErrUnavailable
	for _, v := range s.voices() {
		if e := v.Available(); e != nil {
			err = e
			continue
		}
		if pcm, cached, err = s.prepareWith(ctx, v, r); err == nil {
			return pcm, cached, nil
		}
	}
	return nil, false, err
}

func (s *Service) prepareWith(ctx context.Context, v Voice, r Request) ([][2]float64, bool, error) {
	// The key names the voice that rendered, so a fallback rendering never
	// stands in for the primary voice once that is back.
	key := Key(v.ID(), r)
	if s.cfg.Cache != nil {
		if wav, ok := s.cfg.Cache.Get(key); ok {
			if pcm, err := ToPCM(wav); err == nil {
				return pcm, true, nil
			}
			// Checksummed but undecodable: render it again below.
		}
	}
	wav, err := v.Render(ctx, r)
	if err != nil {
		return nil, false, fmt.Errorf("render speech: %w", err)
	}
	pcm, err := ToPCM(wav)
	if err != nil {
		return nil, false, err
	}
	if s.cfg.Cache != nil {
		if err := s.cfg.Cache.Put(key, wav); err != nil {
			s.cfg.OnError(err)
		}
	}
	return pcm, false, nil
}
