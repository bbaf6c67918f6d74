package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

type groupLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *groupLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *groupLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A part that fails or panics is logged and runs again; one that returns
// nil is done; an essential part's failure is handed on.
func TestGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs groupLog
		g := NewGroup(slog.New(slog.NewTextHandler(&logs, nil)))
		ctx, cancel := context.WithCancel(context.Background())
		var runs, done atomic.Int32
		g.Restarting(ctx, "screen", func(ctx context.Context) error {
			switch runs.Add(1) {
			case 1:
				return errors.New("framebuffer gone")
			case 2:
				panic("drawing broke")
			}
			<-ctx.Done()
			return nil
		})
		g.Restarting(ctx, "finished", func(context.Context) error { done.Add(1); return nil })
		g.Essential(ctx, "core", func(context.Context) error { return errors.New("player broke") })
		if err := <-g.Failed(); err == nil || err.Error() != "core: player broke" {
			t.Errorf("failed: %v", err)
		}
		synctest.Wait()
		if runs.Load() != 1 {
			t.Fatalf("screen ran %d times before its pause", runs.Load())
		}
		time.Sleep(time.Second) // the pause after the first failure
		synctest.Wait()
		if runs.Load() != 2 {
			t.Fatalf("screen ran %d times after 1 s", runs.Load())
		}
		time.Sleep(2 * time.Second) // it doubles
		synctest.Wait()
		if runs.Load() != 3 {
			t.Fatalf("screen ran %d times after 3 s", runs.Load())
		}
		cancel()
		g.Wait()
		if done.Load() != 1 {
			t.Errorf("a finished part ran %d times", done.Load())
		}
		out := logs.String()
		for _, want := range []string{"screen failed, restarting", "framebuffer gone", "panic: drawing broke"} {
			if !strings.Contains(out, want) {
				t.Errorf("log lacks %q:\n%s", want, out)
			}
		}
	})
}
