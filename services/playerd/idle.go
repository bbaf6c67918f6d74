package main

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/power"
)

// idleEvery is how often idle shutdown looks at the player: the setting is
// in minutes.
const idleEvery = 15 * time.Second

func (a *app) runIdleShutdown(ctx context.Context) {
	t := time.NewTicker(idleEvery)
	defer t.Stop()
	a.idleShutdown(ctx, t.C, time.Now, debug.FreeOSMemory)
}

// idleShutdown switches the box off after the settings' minutes in which
// nothing played (power.idle_shutdown_minutes; 0: never), the way a parent
// would: through the power request, which saves the state first and on a
// development machine only logs. tick paces it; now tells the time.
//
// At the first tick that finds the player idle after playing it also calls
// release (debug.FreeOSMemory): what playing left behind (decoders' frames,
// a prefetched track) would otherwise stay until the runtime's forced
// collection, every two minutes on a box that allocates nothing while idle,
// and a box is idle most of the day.
func (a *app) idleShutdown(ctx context.Context, tick <-chan time.Time, now func() time.Time, release func()) {
	since := now()
	played := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		st := a.player.Status()
		if st.State == player.Playing || st.Speaking {
			since = now()
			played = true
			continue
		}
		if played {
			release()
			played = false
		}
		limit := time.Duration(a.settings.Get().Power.IdleShutdownMinutes) * time.Minute
		if limit <= 0 || now().Sub(since) < limit {
			continue
		}
		a.log.Warn("nothing played for the idle time: switching off", "minutes", int(limit/time.Minute))
		since = now() // a development machine keeps running: not again at once
		if _, err := (systemAdmin{a}).Power(power.PowerOff); err != nil {
			a.log.Warn("idle shutdown", "error", err)
		}
	}
}
