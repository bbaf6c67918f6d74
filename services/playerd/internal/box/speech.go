package box

import (
	"path/filepath"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/speech"
)

// speechCacheBytes caps rendered announcements on /perm: thousands of
// sentences, a small share of the smallest SD card.
const speechCacheBytes = 50 << 20

// newSpeech builds the announcements: the local speech program, optionally
// a speech server on the home network in front of it, and the cache.
func (b *Box) newSpeech() *speech.Service {
	local := &speech.ExecVoice{Program: b.cfg.SpeechProgram, DataDir: b.cfg.SpeechData}
	if err := local.Available(); err != nil {
		msg := "no voice: announcements are off"
		if b.cfg.SpeechRemote != "" {
			msg = "no local voice: announcements only while the speech server answers"
		}
		b.log.Warn(msg, "error", err)
	}
	cache, err := speech.OpenCache(filepath.Join(b.cfg.Data, "speech-cache"), speechCacheBytes)
	if err != nil {
		b.log.Warn("speech cache unavailable, rendering every time", "error", err)
		cache = nil
	}
	cfg := speech.Config{
		Voice:    local,
		Cache:    cache,
		Player:   b.player,
		Settings: b.voice,
		OnError:  func(err error) { b.log.Warn("speech", "error", err) },
	}
	if b.cfg.SpeechRemote != "" {
		cfg.Voice = &speech.RemoteVoice{URL: b.cfg.SpeechRemote, Timeout: 5 * time.Second, Policy: b.cfg.Fetch}
		cfg.Fallback = local
	}
	return speech.NewService(cfg)
}

// voice is the speech settings of the moment: the settings' voice, in the
// box's language (lang.Of's voice: the language the screen shows, with the
// tag's region) unless the voice names its own.
func (b *Box) voice() speech.Settings {
	s := b.settings.Get()
	v := speech.Settings{Language: s.Speech.Language, Engine: s.Speech.Engine, Rate: s.Speech.Rate, Pitch: s.Speech.Pitch}
	if v.Language == "" {
		v.Language = lang.Of(s.Language).Voice
	}
	return v
}
