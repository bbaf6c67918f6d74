package main

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/settings"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// newRules builds the parental rules from parental.json and the listening
// counter the previous run saved. They are the player's gate, so they
// exist before the player.
func (a *app) newRules(restored state.Saved) {
	r, err := rules.Load(a.cfg.Data)
	if err != nil {
		a.log.Error("parental rules unreadable: none in force until they are set again", "error", err)
	}
	var l state.Listening
	if restored.Listening != nil {
		l = *restored.Listening
	}
	a.setZone(a.settings.Get())
	a.settings.OnChange(func(_, s settings.Settings) { a.setZone(s) })
	a.rules = rules.NewKeeper(rules.Config{
		Rules:     r,
		Listening: l,
		Clock:     a.cfg.RulesClock,
		Zone:      a.zone.Load,
		Save:      func(l state.Listening, u state.Urgency) { a.store(nil, &l, u) },
		// Every change of the restrictions (bedtime began or ended, the
		// limit ran out, a sleep timer was set or expired): on the event
		// feed, so the screen (its sleep-timer button), /api/events and the
		// home-automation stream hear of it.
		OnChange: func(r rules.Restrictions) {
			a.log.Info("parental restrictions", "active", deref(r.Active), "sleep_timer", r.SleepTimer != nil, "clock", r.Clock)
			a.publish(events.KindRestrictions, r)
		},
		OnLimitReached: a.sayLimitReached,
		OnOverride: func(o rules.Override) {
			a.log.Info("parental rule overridden by an administrator", "rule", o.Reason, "action", o.Action,
				"folder", o.FolderID, "from", o.Caller.Addr.String())
		},
	})
}

// setZone keeps the settings' time zone at hand for the rules, which read
// it at every decision: loading a zone is too slow for that.
func (a *app) setZone(s settings.Settings) {
	loc, err := s.Location()
	if err != nil {
		loc = time.Local // the settings are validated: cannot happen
	}
	a.zone.Store(loc)
}

// store hands the newest persistent state to the saver: the player's part
// (s, or the last one it reported) with the rules' counter (l, or the
// counter as it is now), under one lock so that neither writer puts an
// older copy of the other's part after a newer one. So the counter reaches
// the disk with every save of the position too, about every 8 s while
// playing. It never blocks on the disk.
func (a *app) store(s *state.Saved, l *state.Listening, u state.Urgency) {
	a.storeMu.Lock()
	defer a.storeMu.Unlock()
	if s != nil {
		a.saved.Store(s)
	}
	listening := a.rules.Listening()
	if l != nil {
		listening = *l
	}
	out := *a.saved.Load() // the player's copy is never written to again
	out.Listening = &listening
	a.saver.Save(out, u)
}

// sayLimitReached tells the child, once a day, why the music stopped: on
// the screen and aloud.
func (a *app) sayLimitReached(r *rules.Refusal) {
	a.display.ShowRefusal(r)
	text := "That's enough listening for today. More tomorrow."
	if strings.HasPrefix(a.settings.Get().Language, "de") {
		text = "Für heute ist genug gehört. Morgen geht es weiter."
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := a.speech.Speak(ctx, text, ""); err != nil {
			a.log.Warn("daily-limit announcement", "error", err)
		}
	}()
}

// visible leaves out what the child's home screen does not show: locked
// folders, and their resume points.
func (a *app) visible(folders []library.Folder, resume map[string]state.ResumePoint) ([]library.Folder, map[string]state.ResumePoint) {
	locked := a.rules.Rules().LockedFolders
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

// parentalAdmin is GET and PUT /api/admin/parental.
type parentalAdmin struct {
	a  *app
	mu *sync.Mutex // one change at a time: the file and the rules in force agree
}

func (p parentalAdmin) Rules() rules.Rules { return p.a.rules.Rules() }

// SetRules checks everything (the fields, and that every folder named is in
// the library), writes parental.json atomically and only then puts the
// rules in force: a refusal or a failed write changes nothing.
func (p parentalAdmin) SetRules(r rules.Rules) (rules.Rules, error) {
	if err := r.Validate(); err != nil {
		return rules.Rules{}, err
	}
	for field, ids := range map[string][]string{"bedtime.folders": r.Bedtime.Folders, "locked_folders": r.LockedFolders} {
		for _, id := range ids {
			if _, ok := p.a.lib.Folder(id); !ok {
				return rules.Rules{}, fault.New(fault.Invalid, "%s: no folder %q in the library", field, id)
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := rules.Save(p.a.cfg.Data, r); err != nil {
		return rules.Rules{}, err
	}
	if err := p.a.rules.SetRules(r); err != nil {
		return rules.Rules{}, err // Validate passed: cannot happen
	}
	p.a.log.Info("parental rules changed")
	return p.a.rules.Rules(), nil
}

// parentalFile is parental.json for a backup: nil while no rules were ever
// set (nothing configured).
func (a *app) parentalFile() ([]byte, error) {
	if _, err := os.Stat(filepath.Join(a.cfg.Data, rules.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return jsonFile(a.rules.Rules())
}

// reloadParental puts parental.json in force as it is on disk, after a
// restore replaced it (or removed it: no rules).
func (a *app) reloadParental() error {
	r, err := rules.Load(a.cfg.Data)
	if err != nil {
		return err
	}
	return a.rules.SetRules(r)
}
