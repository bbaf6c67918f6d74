package display

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/settings"
)

// Settings are what a parent sets for the screen (the display part of the
// settings document), applied at once.
type Settings struct {
	Lang lang.Lang // a value lang.Of did not give is decided as a tag
	// IdleOff darkens the screen after this long without a touch or a
	// message (0: never). Playing does not keep it on: a child falls
	// asleep to an audio play in a dark room. The first touch on a dark
	// screen only wakes it.
	IdleOff time.Duration
	// Brightness of the backlight in percent (1..100), where the screen
	// has a backlight the kernel controls.
	Brightness int
}

// Backlight is the screen's light.
type Backlight interface {
	// SetBrightness sets it in percent; 0 switches it off.
	SetBrightness(percent int) error
}

// Apply makes s current.
func (d *Display) Apply(s Settings) {
	s.Lang = known(s.Lang)
	if s.Brightness < 1 || s.Brightness > 100 {
		s.Brightness = 100
	}
	d.mu.Lock()
	d.o.Lang, d.idleOff, d.brightness = s.Lang, s.IdleOff, s.Brightness
	d.lastActive = d.o.Now()
	d.mu.Unlock()
	d.rmu.Lock()
	d.lit = -1 // set the backlight again at the next frame
	d.homeStale = true
	d.rmu.Unlock()
	d.poke()
}

// ContentChanged forgets cached covers and re-reads the home model: the
// library or the navigation changed (a folder renamed, a cover replaced).
func (d *Display) ContentChanged() {
	d.rmu.Lock()
	d.r.covers.reset()
	d.homeStale = true
	d.rmu.Unlock()
	d.poke()
}

// light sets the backlight for a frame: off while dark. Called with rmu
// held.
func (d *Display) light(v *view) {
	if d.o.Backlight == nil {
		return
	}
	d.mu.Lock()
	want := d.brightness
	d.mu.Unlock()
	if v.Dark {
		want = 0
	}
	if want == d.lit {
		return
	}
	if err := d.o.Backlight.SetBrightness(want); err != nil {
		d.o.OnError(fmt.Errorf("display: backlight: %w", err))
	}
	d.lit = want
}

// SysBacklight is a backlight the kernel exposes in /sys/class/backlight.
type SysBacklight struct {
	dir string
	max int
}

// OpenBacklight returns the first backlight below classDir
// (/sys/class/backlight), or an error when there is none.
func OpenBacklight(classDir string) (*SysBacklight, error) {
	entries, err := os.ReadDir(classDir)
	if err != nil {
		return nil, fmt.Errorf("display: backlight: %w", err)
	}
	for _, e := range entries {
		dir := filepath.Join(classDir, e.Name())
		data, err := os.ReadFile(filepath.Join(dir, "max_brightness"))
		if err != nil {
			continue
		}
		if m, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && m > 0 {
			return &SysBacklight{dir: dir, max: m}, nil
		}
	}
	return nil, fmt.Errorf("display: no backlight in %s", classDir)
}

// SetBrightness implements Backlight. Any brightness above 0 is at least
// the lowest step, so the screen never looks off when it is on.
func (b *SysBacklight) SetBrightness(percent int) error {
	v := (percent*b.max + 50) / 100
	if percent > 0 {
		v = max(v, 1)
	}
	return os.WriteFile(filepath.Join(b.dir, "brightness"), []byte(strconv.Itoa(min(v, b.max))+"\n"), 0o644)
}

// SettingsOf is the screen's part of the parent's settings.
func SettingsOf(s settings.Settings) Settings {
	return Settings{Lang: lang.Of(s.Language).UI, IdleOff: time.Duration(s.Display.IdleOffMinutes) * time.Minute, Brightness: s.Display.Brightness}
}
