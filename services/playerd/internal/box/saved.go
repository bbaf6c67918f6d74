package box

import (
	"errors"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// store hands the newest persistent state to the saver: the player's part
// (s, or the last one it reported) with the rules' counter (l, or the
// counter as it is now), under one lock so that neither writer puts an
// older copy of the other's part after a newer one. So the counter reaches
// the disk with every save of the position too, about every 8 s while
// playing. It never blocks on the disk.
func (b *Box) store(s *state.Saved, l *state.Listening, u state.Urgency) {
	b.storeMu.Lock()
	defer b.storeMu.Unlock()
	if s != nil {
		b.saved.Store(s)
	}
	listening := b.rules.Listening()
	if l != nil {
		listening = *l
	}
	out := *b.saved.Load() // the player's copy is never written to again
	out.Listening = &listening
	b.saver.Save(out, u)
}

// reportSave logs the start and the end of an episode of failing state
// writes, once each; retries in between stay quiet.
func (b *Box) reportSave(err error) {
	if err != nil {
		b.log.Error("state", "error", err)
	} else {
		b.log.Info("player state saved again")
	}
}

// Info is GET /api/info: the version and what interfaces need to know.
func (b *Box) Info() map[string]any {
	s := b.settings.Get()
	info := map[string]any{
		"version":             b.cfg.Version,
		"language":            s.Language,
		"ui_language":         lang.Of(s.Language).UI,
		"backend":             "storybox",
		"simulation":          false,
		"settings_persistent": true,
		"max_volume":          s.Audio.MaxVolume,
		"startup_volume":      s.Audio.StartupVolume,
		"announcement_volume": s.Audio.AnnouncementVolume,
		"audio":               s.Audio,
		"loudness":            loudnessInfo(s.Audio),
		"output":              b.cfg.Output,
		"library":             b.lib.Report(),
		"events":              b.feed.Stats(),
		"storage":             b.storage(),
		"licenses":            "/api/licenses", // NOTICE.md, served by the API
	}
	if b.id != "" {
		info["box_id"] = b.id
	}
	return info
}

// storage is whether the newest player state is on disk, and if not why
// and since when. Changes still take effect while saving fails (the child
// keeps listening); they are lost at the next power cut, which is what this
// tells a parent or an admin page.
func (b *Box) storage() map[string]any {
	since, err := b.saver.Err()
	if err == nil {
		return map[string]any{"ok": true, "error": nil, "since": nil}
	}
	return map[string]any{"ok": false, "error": fault.Message(err), "since": since.UTC()}
}

func isConflict(err error) bool { return errors.Is(err, fault.Conflict) }

// german reports a German-speaking box, for what the core says aloud.
func (b *Box) german() bool { return lang.Of(b.settings.Get().Language).UI == lang.German }
