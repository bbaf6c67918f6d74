// Package settings holds the box's settings document (settings.json in the
// data directory): what a parent configures through GET|PUT
// /api/admin/settings. It validates, versions and saves the document, and
// tells the parts of the box that act on it when it changes (Store). It also
// keeps the box's persistent identity.
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	// The zone database is compiled in: gokrazy images have no
	// /usr/share/zoneinfo, and a time zone must validate there too.
	_ "time/tzdata"

	"github.com/google/uuid"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/speech"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Version is the format of settings.json this box writes. A file without a
// version is the format before versions (version 1 with fewer fields: the
// missing ones take their defaults).
const Version = 1

// Settings are what a parent configures.
type Settings struct {
	Version  int     `json:"version"`
	Language string  `json:"language"`
	Speech   Speech  `json:"speech"`
	Audio    Audio   `json:"audio"`
	Display  Display `json:"display"`
	Power    Power   `json:"power"`
	// Calm is the "kindergarten" setting: a child's card or button does
	// not cut the current track off; its folder starts when the track
	// ends (player.Config.Calm).
	Calm bool `json:"calm"`
	// TimeZone is an IANA zone name, for the time-window rules.
	TimeZone string `json:"time_zone"`
	// HostName is the box's name on the home network (an RFC 1123 label);
	// empty means the system's host name.
	HostName string `json:"host_name"`
	// AllowedHosts are further names the API answers to (a router's DNS
	// name for the box), for the DNS-rebinding check.
	AllowedHosts []string `json:"allowed_hosts"`
}

// Speech is the voice of announcements (speech.Settings). An empty
// language speaks the box's language.
type Speech struct {
	Language string `json:"language"`
	Engine   string `json:"engine"`
	Rate     int    `json:"rate"`
	Pitch    int    `json:"pitch"`
}

// Audio settings. Volumes are 0..100 on the player's perceptual scale.
type Audio struct {
	MaxVolume int `json:"max_volume"`
	// MinVolume is the floor of every volume a child or a parent sets
	// (0: none), so a box turned all the way down still sounds; the
	// player keeps it (player.Config.MinVolume).
	MinVolume          int `json:"min_volume"`
	StartupVolume      int `json:"startup_volume"`
	AnnouncementVolume int `json:"announcement_volume"`
	// The headphones, a second output with a cap of its own (headphones.go).
	HeadphoneMaxVolume int    `json:"headphone_max_volume"`
	Headphones         bool   `json:"headphones"`
	HeadphoneDevice    string `json:"headphone_device"`
	// Normalize is the loudness normalisation (player.NormalizeModes).
	Normalize string `json:"normalize"`
}

// Display settings: minutes without a touch until the screen goes dark
// while nothing plays (0: never), and the backlight in percent.
type Display struct {
	IdleOffMinutes int `json:"idle_off_minutes"`
	Brightness     int `json:"brightness"`
}

// Power settings: minutes without playing until the box switches itself
// off (0: never).
type Power struct {
	IdleShutdownMinutes int `json:"idle_shutdown_minutes"`
}

// Limits of the document.
const (
	MaxIdleMinutes  = 1440 // a day
	MaxAllowedHosts = 16
	maxZoneName     = 64
)

// Defaults are child-safe: never full scale, a quiet start.
func Defaults() Settings {
	return Settings{
		Version:      Version,
		Language:     "de",
		Speech:       Speech{Engine: "auto", Rate: 100, Pitch: 100},
		Audio:        Audio{MaxVolume: 80, StartupVolume: 30, AnnouncementVolume: 70, HeadphoneMaxVolume: DefaultHeadphoneMaxVolume, Headphones: true, Normalize: player.NormalizeFolder},
		Display:      Display{Brightness: 100},
		TimeZone:     "Europe/Berlin",
		AllowedHosts: []string{},
	}
}

// Clone returns a copy that shares nothing with s.
func (s Settings) Clone() Settings {
	s.AllowedHosts = slices.Clone(s.AllowedHosts)
	if s.AllowedHosts == nil {
		s.AllowedHosts = []string{}
	}
	return s
}

func invalid(format string, a ...any) *fault.Error { return fault.New(fault.Invalid, format, a...) }

// Validate checks every field; the error (fault.Invalid) names the first
// field that is wrong, as its path in the document.
func (s Settings) Validate() error {
	a, sp, d := s.Audio, s.Speech, s.Display
	switch {
	case s.Version != Version:
		return invalid("version must be %d, not %d", Version, s.Version).Coded("settings_version")
	case !speech.ValidLanguage(s.Language):
		return invalid("language must be a language code such as de or en-GB, not %q", s.Language).Coded("settings_language")
	case sp.Language != "" && !speech.ValidLanguage(sp.Language):
		return invalid("speech.language must be empty (the box's language) or a language code such as de-DE, not %q", sp.Language).Coded("settings_speech_language")
	case !slices.Contains(speech.Engines, sp.Engine):
		return invalid("speech.engine must be one of %s, not %q", strings.Join(speech.Engines, ", "), sp.Engine).Coded("settings_speech_engine")
	case sp.Rate < speech.MinPercent || sp.Rate > speech.MaxPercent:
		return invalid("speech.rate must be %d..%d, not %d", speech.MinPercent, speech.MaxPercent, sp.Rate).Coded("settings_speech_rate")
	case sp.Pitch < speech.MinPercent || sp.Pitch > speech.MaxPercent:
		return invalid("speech.pitch must be %d..%d, not %d", speech.MinPercent, speech.MaxPercent, sp.Pitch).Coded("settings_speech_pitch")
	case a.MaxVolume < 1 || a.MaxVolume > 100:
		return invalid("audio.max_volume must be 1..100, not %d", a.MaxVolume).Coded("settings_max_volume")
	case a.MinVolume < 0 || a.MinVolume > a.MaxVolume:
		return invalid("audio.min_volume must be 0..max_volume (%d), not %d", a.MaxVolume, a.MinVolume).Coded("settings_min_volume")
	case a.StartupVolume < 1 || a.StartupVolume > a.MaxVolume:
		return invalid("audio.startup_volume must be 1..max_volume (%d), not %d", a.MaxVolume, a.StartupVolume).Coded("settings_startup_volume")
	case a.StartupVolume < a.MinVolume:
		return invalid("audio.startup_volume must not be below audio.min_volume (%d), not %d", a.MinVolume, a.StartupVolume).Coded("settings_startup_below_min")
	case a.AnnouncementVolume < 1 || a.AnnouncementVolume > 100:
		return invalid("audio.announcement_volume must be 1..100, not %d", a.AnnouncementVolume).Coded("settings_announcement_volume")
	case !slices.Contains(player.NormalizeModes, a.Normalize):
		return invalid("audio.normalize must be one of %s, not %q", strings.Join(player.NormalizeModes, ", "), a.Normalize).Coded("settings_normalize")
	case d.IdleOffMinutes < 0 || d.IdleOffMinutes > MaxIdleMinutes:
		return invalid("display.idle_off_minutes must be 0..%d (0: never), not %d", MaxIdleMinutes, d.IdleOffMinutes).Coded("settings_idle_off_minutes")
	case d.Brightness < 1 || d.Brightness > 100:
		return invalid("display.brightness must be 1..100, not %d", d.Brightness).Coded("settings_brightness")
	case s.Power.IdleShutdownMinutes < 0 || s.Power.IdleShutdownMinutes > MaxIdleMinutes:
		return invalid("power.idle_shutdown_minutes must be 0..%d (0: never), not %d", MaxIdleMinutes, s.Power.IdleShutdownMinutes).Coded("settings_idle_shutdown_minutes")
	}
	if err := a.checkHeadphones(); err != nil {
		return err
	}
	if _, err := s.Location(); err != nil {
		return err
	}
	if s.HostName != "" && !IsLabel(s.HostName) {
		return invalid("host_name must be empty or a name of 1..63 letters, digits and inner hyphens, not %q", s.HostName).Coded("settings_host_name")
	}
	if len(s.AllowedHosts) > MaxAllowedHosts {
		return invalid("allowed_hosts takes at most %d names, not %d", MaxAllowedHosts, len(s.AllowedHosts)).Coded("settings_allowed_hosts_count")
	}
	for i, h := range s.AllowedHosts {
		if !IsHostName(h) {
			return invalid("allowed_hosts[%d] must be a DNS name such as box.fritz.box (no port, no address), not %q", i, h).Coded("settings_allowed_host")
		}
	}
	return nil
}

// Location is the time zone. The database is compiled in, so every IANA
// name validates on the box as on a PC.
func (s Settings) Location() (*time.Location, error) {
	if s.TimeZone == "" || s.TimeZone == "Local" || len(s.TimeZone) > maxZoneName {
		return nil, invalid("time_zone must be an IANA time zone such as Europe/Berlin, not %q", s.TimeZone).Coded("settings_time_zone")
	}
	loc, err := time.LoadLocation(s.TimeZone)
	if err != nil {
		return nil, invalid("time_zone must be an IANA time zone such as Europe/Berlin, not %q", s.TimeZone).Coded("settings_time_zone")
	}
	return loc, nil
}

// IsLabel reports whether s is an RFC 1123 host name label: 1..63 ASCII
// letters, digits and hyphens, not starting or ending with a hyphen.
func IsLabel(s string) bool {
	if len(s) < 1 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// IsHostName reports whether s is a DNS name of labels (at most 253
// characters). Names of digits and dots only are refused: they would be
// IPv4 addresses, which the host check accepts anyway.
func IsHostName(s string) bool {
	if len(s) < 1 || len(s) > 253 {
		return false
	}
	digitsOnly := true
	for _, l := range strings.Split(s, ".") {
		if !IsLabel(l) {
			return false
		}
		if strings.Trim(l, "0123456789") != "" {
			digitsOnly = false
		}
	}
	return !digitsOnly
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
		if s.Version == 0 { // written before the format had a version
			s.Version = Version
		}
		s = s.Clone()
		err = s.Validate()
	}
	if err != nil {
		return Defaults(), fmt.Errorf("settings: %w (using defaults)", err)
	}
	return s, nil
}

// Parse decodes a whole settings document strictly (unknown fields,
// trailing data and an unknown version are refused) over the defaults and
// validates it: the check for settings.json in a backup.
func Parse(data []byte) (Settings, error) {
	s := Defaults()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, invalid("not a settings document: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Settings{}, invalid("not a settings document: data after the object")
	}
	s = s.Clone()
	return s, s.Validate()
}

// Check is Parse for callers that only need the verdict.
func Check(data []byte) error {
	_, err := Parse(data)
	return err
}

// Save writes s atomically after validating it.
func Save(dataDir string, s Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if err := state.WriteJSON(filepath.Join(dataDir, FileName), s); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return nil
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

// HostNames are the names the settings give the box beside the system's
// own: the host name, with ".local", and the allowed hosts.
func (s Settings) HostNames() []string {
	var names []string
	if s.HostName != "" {
		names = append(names, s.HostName, s.HostName+".local")
	}
	return append(names, s.AllowedHosts...)
}
