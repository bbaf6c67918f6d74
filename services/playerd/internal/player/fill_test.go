package player

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/output"
)

// fullDeviceSink is a device whose buffer does not drain until it is
// dropped: a Write into the full buffer would block for good, as a stalled
// device's does.
type fullDeviceSink struct {
	full    atomic.Bool
	writes  atomic.Int32 // into the full buffer
	blocked chan struct{}
}

func (s *fullDeviceSink) Write([][2]float64) error {
	if s.full.Load() {
		s.writes.Add(1)
		<-s.blocked
	}
	return nil
}
func (s *fullDeviceSink) Rate() int     { return output.DefaultRate }
func (s *fullDeviceSink) Drop() error   { s.full.Store(false); return nil }
func (s *fullDeviceSink) Drain() error  { return nil }
func (s *fullDeviceSink) Close() error  { return nil }
func (s *fullDeviceSink) Capacity() int { return 8 * output.PeriodFrames }
func (s *fullDeviceSink) Delay() int {
	if s.full.Load() {
		return s.Capacity()
	}
	return 0
}

// While the device buffer is full the player sleeps outside the sink, so a
// command is carried out at once instead of after a blocking write (which
// here would never end), and nothing is written into a full buffer.
func TestCommandsWhileTheDeviceIsFull(t *testing.T) {
	sink := &fullDeviceSink{blocked: make(chan struct{})}
	sink.full.Store(true)
	defer close(sink.blocked)
	f := folderOf(t, "f", 5)
	h := newHarness(t, catalog{f.ID: f}, Config{Open: func(int) (output.Sink, error) { return sink, nil }}, nil)
	h.do(Command{Action: ActFolder, FolderID: f.ID})
	for _, c := range []Command{{Action: ActVolume, Value: val(40)}, {Action: ActPause}} {
		// The deadline only turns a hang into a failure.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := h.p.Do(ctx, c)
		cancel()
		if err != nil {
			t.Fatalf("%s while the device is full: %v", c.Action, err)
		}
		if c.Action == ActPause && st.State != Paused {
			t.Errorf("state after pause: %s", st.State)
		}
	}
	if n := sink.writes.Load(); n != 0 {
		t.Errorf("%d writes into a full buffer", n)
	}
}
