package box

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/power"
)

// idleEvery is how often the idle checks look at the player: the setting
// is in minutes.
const idleEvery = 15 * time.Second

func (b *Box) runIdle(ctx context.Context) {
	t := time.NewTicker(idleEvery)
	defer t.Stop()
	b.idle(ctx, t.C, heapMemory{retained: retainedHeap, release: debug.FreeOSMemory})
}

// heapMemory is what the idle checks know of the Go heap: how much of it a
// release would give back to the system, and the release.
type heapMemory struct {
	retained func() uint64
	release  func()
}

// releaseAbove is how much retained heap an idle box gives back at its next
// check, whatever left it: an hour of music, a few short plays no check saw,
// an upload, a scan. Below it a release would cost a collection for little.
const releaseAbove = 2 << 20

// retainedHeap is the heap a release would give back: spans free but not
// yet returned, and objects allocated since the last collection beyond what
// it found live (garbage, mostly, on an idle box).
func retainedHeap() uint64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(s)
	for _, v := range s {
		if v.Value.Kind() != metrics.KindUint64 {
			return 0 // a runtime without these: the forced collection releases
		}
	}
	free, objects, live := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
	return free + objects - min(objects, live)
}

// idle switches the box off after the settings' minutes in which nothing
// played (power.idle_shutdown_minutes; 0: never), through the one power
// request, which saves the state first and on a development machine only
// logs. The minutes are counted on the clock's uptime, so a step of the
// wall clock neither switches the box off early nor keeps it on. tick
// paces the checks.
//
// A check that finds the player idle with more than releaseAbove of heap to
// give back also releases it (debug.FreeOSMemory): what playing left behind
// (decoders' frames, a prefetched track) would otherwise stay until the
// runtime's forced collection, every two minutes on a box that allocates
// nothing while idle, and a box is idle most of the day.
func (b *Box) idle(ctx context.Context, tick <-chan time.Time, mem heapMemory) {
	since := b.clock.Uptime()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		st := b.player.Status()
		if st.State == player.Playing || st.Speaking {
			since = b.clock.Uptime()
			continue
		}
		if mem.retained() > releaseAbove {
			mem.release()
		}
		limit := time.Duration(b.settings.Get().Power.IdleShutdownMinutes) * time.Minute
		if limit <= 0 || b.clock.Uptime()-since < limit {
			continue
		}
		b.log.Warn("nothing played for the idle time: switching off", "minutes", int(limit/time.Minute))
		since = b.clock.Uptime() // a development machine keeps running: not again at once
		if _, err := b.power.Request(power.PowerOff, "idle time"); err != nil {
			b.log.Warn("idle shutdown", "error", err)
		}
	}
}
