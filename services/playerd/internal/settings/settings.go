// Package settings holds the box's settings (settings.json in the data
// directory) and its persistent identity.
package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Settings are what a parent configures.
type Settings struct {
	Language string `json:"language"`
	Audio    Audio  `json:"audio"`
}

// Audio settings. Volumes are 0..100 on the player's perceptual scale.
type Audio struct {
	MaxVolume          int `json:"max_volume"`
	StartupVolume      int `json:"startup_volume"`
	AnnouncementVolume int `json:"announcement_volume"`
}

// Defaults are child-safe: never full scale, a quiet start.
func Defaults() Settings {
	return Settings{Language: "de", Audio: Audio{MaxVolume: 80, StartupVolume: 30, AnnouncementVolume: 70}}
}

// Validate checks ranges and the rule that the start is never above the maximum.
func (s Settings) Validate() error {
	a := s.Audio
	switch {
	case s.Language == "" || len(s.Language) > 16 || strings.ContainsAny(s.Language, "/\\ "):
		return fmt.Errorf("language %q is not a language code", s.Language)
	case a.MaxVolume < 1 || a.MaxVolume > 100:
		return fmt.Errorf("audio.max_volume must be 1..100, not %d", a.MaxVolume)
	case a.StartupVolume < 1 || a.StartupVolume > a.MaxVolume:
		return fmt.Errorf("audio.startup_volume must be 1..max_volume (%d), not %d", a.MaxVolume, a.StartupVolume)
	case a.AnnouncementVolume < 1 || a.AnnouncementVolume > 100:
		return fmt.Errorf("audio.announcement_volume must be 1..100, not %d", a.AnnouncementVolume)
	}
	return nil
}

// FileName is the settings file in the data directory.
const FileName = "settings.json"

// Load reads the settings. Missing fields keep their defaults; a missing
// file gives the defaults; a corrupt or invalid one gives the defaults and
// an error to log (the file is left for the parent to fix).
func Load(dataDir string) (Settings, error) {
	s := Defaults()
	err := state.ReadJSON(filepath.Join(dataDir, FileName), &s)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		return Defaults(), fmt.Errorf("settings: %w (using defaults)", err)
	}
	return s, nil
}

// BoxID returns the box's persistent UUID, creating it on first start. Home
// Assistant checks it to recognise the box.
func BoxID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "box_id")
	if data, err := os.ReadFile(path); err == nil {
		if id, err := uuid.ParseBytes([]byte(strings.TrimSpace(string(data)))); err == nil {
			return id.String(), nil
		}
	}
	id := uuid.NewString()
	if err := state.WriteFile(path, []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("settings: box id: %w", err)
	}
	return id, nil
}
