package box

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// newRules builds the parental rules from parental.json and the listening
// counter the previous run saved. They are the player's gate, so they
// exist before the player.
func (b *Box) newRules(restored state.Saved) {
	r, err := rules.Load(b.cfg.Data)
	if err != nil {
		b.log.Error("parental rules unreadable: none in force until they are set again", "error", err)
	}
	var l state.Listening
	if restored.Listening != nil {
		l = *restored.Listening
	}
	b.setZone(b.settings.Get())
	b.rules = rules.NewKeeper(rules.Config{
		Rules:     r,
		Listening: l,
		Clock:     b.clock,
		Zone:      b.zone.Load,
		Save:      func(l state.Listening, u state.Urgency) { b.store(nil, &l, u) },
		// Every change of the restrictions (bedtime began or ended, the
		// limit ran out, a sleep timer was set or expired) goes on the
		// feed: the screen's sleep-timer button, /api/events and the
		// home-automation stream follow it.
		OnChange: func(r rules.Restrictions) {
			b.log.Info("parental restrictions", "active", deref(r.Active), "sleep_timer", r.SleepTimer != nil, "clock", r.Clock)
			b.notify.restrictions(r)
		},
		OnRules:        b.notify.section(SectionParental),
		OnLimitReached: b.sayLimitReached,
		OnOverride: func(o rules.Override) {
			b.log.Info("parental rule overridden by an administrator", "rule", o.Reason, "action", o.Action,
				"folder", o.FolderID, "from", o.Caller.Addr.String())
		},
	})
}

// setZone keeps the settings' time zone at hand for the rules, which read
// it at every decision: loading a zone is too slow for that.
func (b *Box) setZone(s settings.Settings) {
	loc, err := s.Location()
	if err != nil {
		loc = time.Local // the settings are validated: cannot happen
	}
	b.zone.Store(loc)
}

// sayLimitReached tells the child, once a day, why the music stopped: on
// the screen and aloud.
func (b *Box) sayLimitReached(r *rules.Refusal) {
	b.onScreen(func(s ScreenSurface) { s.ShowRefusal(r) })
	text := "That's enough listening for today. More tomorrow."
	if b.german() {
		text = "Für heute ist genug gehört. Morgen geht es weiter."
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := b.speech.Speak(ctx, text, ""); err != nil {
			b.log.Warn("daily-limit announcement", "error", err)
		}
	}()
}

// visible leaves out what the child's home screen does not show: locked
// folders, and their resume points.
func (b *Box) visible(folders []library.Folder, resume map[string]state.ResumePoint) ([]library.Folder, map[string]state.ResumePoint) {
	locked := b.rules.Rules().LockedFolders
	if len(locked) == 0 {
		return folders, resume
	}
	folders = slices.DeleteFunc(slices.Clone(folders), func(f library.Folder) bool { return slices.Contains(locked, f.ID) })
	resume = maps.Clone(resume)
	for _, id := range locked {
		delete(resume, id)
	}
	return folders, resume
}

// Parental is the parent's side of the rules (GET and PUT
// /api/admin/parental).
type Parental struct{ b *Box }

// Parental is the parent's side of the rules.
func (b *Box) Parental() Parental { return Parental{b} }

func (p Parental) Rules() rules.Rules { return p.b.rules.Rules() }

// SetRules checks everything (the fields, and that every folder named is in
// the catalog: a station or a podcast is a folder like any other), writes
// parental.json atomically and only then puts the rules in force: a
// refusal or a failed write changes nothing.
func (p Parental) SetRules(r rules.Rules) (rules.Rules, error) {
	if err := r.Validate(); err != nil {
		return rules.Rules{}, err
	}
	for _, f := range []struct {
		name string
		ids  []string
	}{{"bedtime.folders", r.Bedtime.Folders}, {"locked_folders", r.LockedFolders}} {
		for _, id := range f.ids {
			if _, ok := p.b.catalog.Folder(id); !ok {
				return rules.Rules{}, fault.New(fault.Invalid, "%s: no folder %q in the library", f.name, id)
			}
		}
	}
	p.b.ruleMu.Lock()
	defer p.b.ruleMu.Unlock()
	if err := rules.Save(p.b.cfg.Data, r); err != nil {
		return rules.Rules{}, err
	}
	if err := p.b.rules.SetRules(r); err != nil {
		return rules.Rules{}, err // Validate passed: cannot happen
	}
	p.b.log.Info("parental rules changed")
	return p.b.rules.Rules(), nil
}

// parentalFile is parental.json for a backup: nil while no rules were ever
// set (nothing configured).
func (b *Box) parentalFile() ([]byte, error) {
	if _, err := os.Stat(filepath.Join(b.cfg.Data, rules.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return jsonFile(b.rules.Rules())
}

// reloadParental puts parental.json in force as it is on disk, after a
// restore replaced it (or removed it: no rules).
func (b *Box) reloadParental() error {
	r, err := rules.Load(b.cfg.Data)
	if err != nil {
		return err
	}
	b.ruleMu.Lock()
	defer b.ruleMu.Unlock()
	return b.rules.SetRules(r)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
