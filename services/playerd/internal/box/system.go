package box

import (
	"time"

	"github.com/storybox/storybox/services/playerd/internal/power"
	"github.com/storybox/storybox/services/playerd/internal/sysinfo"
)

// System is the machine and its power, for the admin area.
type System struct {
	b     *Box
	ready sysinfo.Ready
}

// System is the machine as the admin area shows it; ready is when the API
// first served (sysinfo.MarkReady).
func (b *Box) System(ready sysinfo.Ready) System { return System{b, ready} }

func (s System) Info() sysinfo.Info {
	c := sysinfo.Config{Proc: "/proc", Sys: "/sys", DataDir: s.b.cfg.Data, Version: s.b.cfg.Version}
	return sysinfo.Read(c, s.ready, time.Now())
}

// Power asks for a power-off or restart from the admin area.
func (s System) Power(act power.Action) (dryRun bool, err error) {
	return s.b.power.Request(act, "administrator")
}
