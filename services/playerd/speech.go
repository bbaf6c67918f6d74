package main

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/hat"
	"github.com/storybox/storybox/services/playerd/internal/speech"
)

// speechCacheBytes caps rendered announcements on /perm: thousands of
// sentences, a small share of the smallest SD card.
const speechCacheBytes = 50 << 20

// newSpeech builds the announcement service: the local speech program,
// optionally a speech server on the LAN in front of it, and the cache.
func (a *app) newSpeech() *speech.Service {
	local := &speech.ExecVoice{Program: a.cfg.SpeechProgram, DataDir: a.cfg.SpeechData}
	if err := local.Available(); err != nil {
		msg := "no voice: announcements are off"
		if a.cfg.SpeechRemote != "" {
			msg = "no local voice: announcements only while the speech server answers"
		}
		a.log.Warn(msg, "error", err)
	}
	cache, err := speech.OpenCache(filepath.Join(a.cfg.Data, "speech-cache"), speechCacheBytes)
	if err != nil {
		a.log.Warn("speech cache unavailable, rendering every time", "error", err)
		cache = nil
	}
	cfg := speech.Config{
		Voice:    local,
		Cache:    cache,
		Player:   a.player,
		Settings: a.voice,
		OnError:  func(err error) { a.log.Warn("speech", "error", err) },
	}
	if a.cfg.SpeechRemote != "" {
		cfg.Voice = &speech.RemoteVoice{URL: a.cfg.SpeechRemote, Timeout: 5 * time.Second}
		cfg.Fallback = local
	}
	return speech.NewService(cfg)
}

// voice is the speech settings of the moment: the settings' voice, in the
// box's language unless the voice names its own.
func (a *app) voice() speech.Settings {
	s := a.settings.Get()
	v := speech.Settings{Language: s.Speech.Language, Engine: s.Speech.Engine, Rate: s.Speech.Rate, Pitch: s.Speech.Pitch}
	if v.Language == "" {
		v.Language = s.Language
	}
	return v
}

// batteryNotice shows the low-battery notice and says it once per drop.
func (a *app) batteryNotice(ctx context.Context, c hat.LevelChange) {
	a.display.SetBatteryLow(c.To == hat.LevelLow || c.To == hat.LevelCritical)
	if c.To != hat.LevelLow {
		return
	}
	text := "The battery is almost empty. Please charge the box."
	if strings.HasPrefix(a.settings.Get().Language, "de") {
		text = "Der Akku ist fast leer. Bitte lade die Box auf."
	}
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := a.speech.Speak(sctx, text, ""); err != nil {
			a.log.Warn("low-battery announcement", "error", err)
		}
	}()
}
