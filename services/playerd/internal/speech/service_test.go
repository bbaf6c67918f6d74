package speech

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

func startService(t *testing.T, cfg Config) *Service {
	t.Helper()
	s := NewService(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

func TestSpeakPlaysInOrderAndCaches(t *testing.T) {
	v := &fakeVoice{id: "fake"}
	p := &fakePlayer{}
	c, _ := OpenCache(t.TempDir(), 1<<20)
	s := startService(t, Config{Voice: v, Player: p, Cache: c,
		Settings: func() Settings { return Settings{Language: "de-DE"} }})
	ctx := context.Background()

	r, err := s.SpeakResult(ctx, "Abendessen ist fertig!", "")
	if err != nil || !r.Speaking || r.Cached {
		t.Fatalf("first: %+v, %v", r, err)
	}
	r, err = s.SpeakResult(ctx, "  Abendessen   ist fertig! ", "")
	if err != nil || !r.Speaking || !r.Cached {
		t.Fatalf("repeat: %+v, %v; want served from the cache", r, err)
	}
	if _, err := s.SpeakResult(ctx, "Dinner is ready", "en-GB"); err != nil {
		t.Fatal(err)
	}
	want := []string{"de-DE:Abendessen ist fertig!", "en-GB:Dinner is ready"}
	if got := v.rendered(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rendered %q, want %q", got, want)
	}
	if n := p.lens(); len(n) != 3 || n[0] != n[1] {
		t.Errorf("clips %v: want 3, the first two equal", n)
	}
}

func TestSpeakRefusesBadInput(t *testing.T) {
	v := &fakeVoice{id: "fake"}
	s := startService(t, Config{Voice: v, Player: &fakePlayer{}})
	ctx := context.Background()
	for _, tc := range []struct {
		text, lang string
		want       error
	}{
		{"", "", ErrEmpty},
		{" \n ", "", ErrEmpty},
		{strings.Repeat("x", MaxTextRunes+1), "", ErrTooLong},
		{"Hallo", "de DE", ErrLanguage},
	} {
		if _, err := s.SpeakResult(ctx, tc.text, tc.lang); !errors.Is(err, tc.want) || !errors.Is(err, fault.Invalid) {
			t.Errorf("Speak(%.10q, %q) = %v, want %v", tc.text, tc.lang, err, tc.want)
		}
	}
	if n := len(v.rendered()); n != 0 {
		t.Errorf("%d renderings for refused requests", n)
	}
	// The voice says it does not know the language: also the caller's fault.
	v.err = fmt.Errorf("%w: xx", ErrLanguage)
	if _, err := s.SpeakResult(ctx, "Hallo", "xx"); !errors.Is(err, ErrLanguage) {
		t.Errorf("unknown language: %v", err)
	}
}

func TestSpeakUnavailable(t *testing.T) {
	s := startService(t, Config{Voice: &fakeVoice{unavail: fmt.Errorf("%w: no program", ErrUnavailable)}, Player: &fakePlayer{}})
	if _, err := s.SpeakResult(context.Background(), "Hallo", ""); !errors.Is(err, ErrUnavailable) {
		t.Errorf("got %v, want ErrUnavailable", err)
	}
	s2 := startService(t, Config{Player: &fakePlayer{}})
	if _, err := s2.SpeakResult(context.Background(), "Hallo", ""); !errors.Is(err, ErrUnavailable) {
		t.Errorf("no voice: got %v, want ErrUnavailable", err)
	}
}

// The test runs in a synctest bubble: StartWait's 20 ms are fake time, which
// passes only while every goroutine waits, so rendering "eins" can take as
// long as it likes (under -race) and still count as started in time.
func TestSpeakQueueIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePlayer{release: make(chan struct{})}
		s := startService(t, Config{Voice: &fakeVoice{id: "f"}, Player: p, QueueSize: 2, StartWait: 20 * time.Millisecond})
		ctx := context.Background()
		if r, err := s.SpeakResult(ctx, "eins", ""); err != nil || !r.Speaking {
			t.Fatalf("first: %+v %v", r, err)
		}
		if !s.Speaking() {
			t.Error("Speaking false while a clip plays")
		}
		// The worker is busy with "eins": two more wait, the fourth is refused.
		for _, txt := range []string{"zwei zwei", "drei drei drei"} {
			if r, err := s.SpeakResult(ctx, txt, ""); err != nil || !r.Queued {
				t.Fatalf("%s: %+v %v, want queued", txt, r, err)
			}
		}
		if _, err := s.SpeakResult(ctx, "vier", ""); !errors.Is(err, ErrBusy) || fault.RetryAfterOf(err) != 5*time.Second {
			t.Fatalf("fourth: %v (retry after %v), want ErrBusy, retry after 5s", err, fault.RetryAfterOf(err))
		}
		for range 3 {
			p.release <- struct{}{}
		}
		synctest.Wait() // the worker is idle again
		if n := p.lens(); len(n) != 3 || s.Speaking() {
			t.Fatalf("queued announcements not played: %v, speaking %v", n, s.Speaking())
		}
		if n := p.lens(); n[0] >= n[1] || n[1] >= n[2] {
			t.Errorf("clip lengths %v: want growing lengths (the order of the requests)", n)
		}
	})
}

func TestSpeakFallsBackAndReportsFailures(t *testing.T) {
	remote := &fakeVoice{id: "remote", err: errors.New("connection refused")}
	local := &fakeVoice{id: "local"}
	c, _ := OpenCache(t.TempDir(), 1<<20)
	s := startService(t, Config{Voice: remote, Fallback: local, Player: &fakePlayer{}, Cache: c})
	if r, err := s.SpeakResult(context.Background(), "Hallo", ""); err != nil || !r.Speaking {
		t.Fatalf("%+v %v", r, err)
	}
	if len(remote.rendered()) != 1 || len(local.rendered()) != 1 {
		t.Errorf("remote %v, local %v: want one try each", remote.rendered(), local.rendered())
	}
	// The fallback's audio is cached under the fallback's key only: once
	// the server is back, it speaks again.
	remote.err = nil
	if r, err := s.SpeakResult(context.Background(), "Hallo", ""); err != nil || r.Cached {
		t.Fatalf("%+v %v: want a fresh rendering by the remote voice", r, err)
	}

	// In a synctest bubble StartWait's 10 ms pass only while the worker
	// waits: the first request waits on the blocked voice and is queued;
	// the second fails at once, however slowly the worker runs.
	synctest.Test(t, func(t *testing.T) {
		errs := make(chan error, 1)
		broken := &fakeVoice{id: "broken", err: errors.New("boom"), block: make(chan struct{})}
		s2 := startService(t, Config{Voice: broken, Player: &fakePlayer{}, StartWait: 10 * time.Millisecond,
			OnError: func(err error) { errs <- err }})
		if r, err := s2.SpeakResult(context.Background(), "Hallo", ""); err != nil || !r.Queued {
			t.Fatalf("%+v %v, want queued", r, err)
		}
		close(broken.block)
		select {
		case err := <-errs:
			if !strings.Contains(err.Error(), "boom") {
				t.Errorf("reported %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("failure after the answer was not reported")
		}
		if _, err := s2.SpeakResult(context.Background(), "Hallo", ""); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("got %v, want the rendering error", err)
		}
	})
}

func TestSpeakPlayerRefuses(t *testing.T) {
	s := startService(t, Config{Voice: &fakeVoice{id: "f"}, Player: &fakePlayer{err: errors.New("player is busy")}})
	if _, err := s.SpeakResult(context.Background(), "Hallo", ""); err == nil {
		t.Error("player refusal not reported")
	}
}

func TestSpeakAfterShutdown(t *testing.T) {
	s := NewService(Config{Voice: &fakeVoice{id: "f"}, Player: &fakePlayer{}, StartWait: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Run(ctx)
	if _, err := s.SpeakResult(context.Background(), "Hallo", ""); !errors.Is(err, ErrClosed) {
		t.Errorf("got %v, want ErrClosed", err)
	}
}
