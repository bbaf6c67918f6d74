package box

import (
	"context"
	"errors"
	"log/slog"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/power"
)

// Power is the one way the box reboots or switches off. Everyone asks the
// same way (the admin API, home automation, the power button, the idle
// time, a critical battery) and meets the same rule: the first request is
// taken, and any other while it is pending is refused (fault.Conflict).
// A taken request goes to whoever runs the box (Requested), which pauses,
// stops every part, saves the state and only then switches (Switch).
//
// A machine that cannot switch (a development machine, not gokrazy) takes
// a request as a dry run: it is logged and the box keeps running.
type Power struct {
	log      *slog.Logger
	switches map[power.Action]power.Func // nil entries: this machine cannot
	pending  chan power.Action           // holds the one taken request
}

// ErrPowerPending refuses a request while another is pending.
var ErrPowerPending = fault.New(fault.Conflict, "a power action is already scheduled").Coded("power_pending")

func newPower(off, reboot power.Func, log *slog.Logger) *Power {
	p := &Power{log: log, switches: map[power.Action]power.Func{power.PowerOff: off, power.Reboot: reboot}, pending: make(chan power.Action, 1)}
	if power.OnGokrazy() {
		if off == nil {
			p.switches[power.PowerOff] = power.System(true)
		}
		if reboot == nil {
			p.switches[power.Reboot] = power.SystemReboot(true)
		}
	}
	return p
}

// CanSwitch reports whether this machine switches for real (or a test's
// switch is in place), not only logs.
func (p *Power) CanSwitch() bool {
	return p.switches[power.PowerOff] != nil || p.switches[power.Reboot] != nil
}

// Request asks for act on behalf of by (for the log). dryRun reports a
// machine that cannot switch: nothing will happen but the log line.
func (p *Power) Request(act power.Action, by string) (dryRun bool, err error) {
	if _, err := power.ParseAction(string(act)); err != nil {
		return false, err
	}
	if p.switches[act] == nil {
		p.log.Warn("not on gokrazy: the box would "+string(act)+" now", "by", by)
		return true, nil
	}
	select {
	case p.pending <- act:
		p.log.Warn("power requested", "action", act, "by", by)
		return false, nil
	default:
		return false, ErrPowerPending
	}
}

// Requested delivers the taken request to whoever runs the box.
func (p *Power) Requested() <-chan power.Action { return p.pending }

// Switch carries out act once the state is on disk. A failure is returned
// so playerd exits non-zero and gokrazy restarts it.
func (p *Power) Switch(ctx context.Context, act power.Action) error {
	f := p.switches[act]
	if f == nil {
		return nil // Request never takes one without a switch
	}
	err := f(ctx)
	if errors.Is(err, power.ErrDryRun) {
		p.log.Warn("not on gokrazy: the box would " + string(act) + " now")
		return nil
	}
	return err
}

// AskFor is how a surface that takes an action by name (home automation's
// "reboot" or "poweroff") asks for the power on behalf of who: nil where
// this machine cannot switch, so the surface does not offer it.
func (p *Power) AskFor(who string) func(action string) error {
	if !p.CanSwitch() {
		return nil
	}
	return func(action string) error {
		act, err := power.ParseAction(action)
		if err != nil {
			return err
		}
		_, err = p.Request(act, who)
		return err
	}
}
