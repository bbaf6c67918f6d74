package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/hat"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/system"
)

// battery connects playerd to hatd: the API's status source, the monitor,
// the low-battery warning and the clean power-off on critical.
type battery struct {
	client   *hat.Client
	monitor  *hat.Monitor
	critical chan struct{} // closed once on the first critical level
	once     sync.Once
}

// newBattery returns nil when -hat is not set.
func newBattery(socket string) *battery {
	if socket == "" {
		return nil
	}
	return &battery{client: hat.NewClient(socket, time.Second), critical: make(chan struct{})}
}

// hatSource is the API's status source; without hatd it says that there
// is no board, so pollers get the same shape either way.
func (b *battery) hatSource() api.HatSource {
	if b == nil {
		return hat.NotConfigured{}
	}
	return b.client
}

// systemBattery is the battery part of /api/system.
func (b *battery) systemBattery() system.Battery {
	if b == nil {
		return system.Battery{}
	}
	s := b.client.Battery()
	return system.Battery{Available: s.Available, Percent: s.Percent, Charging: s.Charging}
}

// start polls hatd until ctx ends.
func (a *app) startBattery(ctx context.Context, wg *sync.WaitGroup) {
	b := a.battery
	if b == nil {
		return
	}
	b.monitor = hat.NewMonitor(b.client, hat.MonitorOptions{
		OnReachable: func(ok bool, err error) {
			if ok {
				a.log.Info("battery board service reachable", "socket", a.cfg.Hat)
			} else {
				a.log.Warn("battery board service unreachable", "error", err)
			}
		},
		OnLevel: func(c hat.LevelChange) { a.onBatteryLevel(ctx, b, c) },
	})
	wg.Add(1)
	go func() { defer wg.Done(); b.monitor.Run(ctx) }()
}

func (a *app) onBatteryLevel(ctx context.Context, b *battery, c hat.LevelChange) {
	a.log.Warn("battery level", "from", c.From, "to", c.To, "percent", deref(c.Percent))
	a.publish(events.KindBattery, batteryEvent{c.To, c.Percent})
	a.batteryNotice(ctx, c) // the screen and the spoken warning (speech.go)
	switch c.To {
	case hat.LevelLow:
		go func() {
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := a.player.Announce(actx, hat.WarningTone(int(output.ClipRate))); err != nil {
				a.log.Warn("low-battery warning", "error", err)
			}
		}()
	case hat.LevelCritical:
		b.once.Do(func() { close(b.critical) })
	}
}

// criticalC is closed when the battery reached critical; nil without hatd.
func (b *battery) criticalC() <-chan struct{} {
	if b == nil {
		return nil
	}
	return b.critical
}

// prepareShutdown pauses playback so the final saved state keeps the
// position, before run's normal shutdown saves it.
func (a *app) prepareShutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := a.player.Do(ctx, player.Command{Action: player.ActPause})
	if err != nil && !errors.Is(err, fault.Conflict) {
		a.log.Warn("pause before power-off", "error", err)
	}
}

// powerOff runs after the state is on disk.
func (a *app) powerOff() error {
	a.log.Warn("battery critical: powering off")
	return a.switchPower(power.PowerOff)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
