package settings

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
)

func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	s, err := Load(dir)
	if err != nil || !reflect.DeepEqual(s, Defaults()) {
		t.Errorf("no file: %+v %v", s, err)
	}
	write := func(content string) {
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A file from before versions and new fields: what it has is kept, the
	// rest takes the defaults.
	write(`{"audio":{"max_volume":50}}`)
	if s, err := Load(dir); err != nil || s.Audio.MaxVolume != 50 || s.Audio.StartupVolume != 30 || s.Language != "de" ||
		s.Version != Version || s.Display.Brightness != 100 || s.AllowedHosts == nil {
		t.Errorf("partial file: %+v %v", s, err)
	}
	for _, bad := range []string{
		`{"audio":{"max_volume":150}}`,
		`{"audio":{"max_volume":20,"startup_volume":30}}`,
		`{"language":""}`,
		`{"audio":{"max_volume":"x"}}`,
		`{"version":2}`,
		`{"time_zone":"Mars/Olympus"}`,
		`{`,
	} {
		write(bad)
		if s, err := Load(dir); err == nil || !reflect.DeepEqual(s, Defaults()) {
			t.Errorf("%s: %+v %v, want defaults and an error", bad, s, err)
		}
	}
}

// Every refusal is fault.Invalid and names the field as its path in the
// document.
func TestValidateNamesTheField(t *testing.T) {
	for field, mutate := range map[string]func(*Settings){
		"version":                         func(s *Settings) { s.Version = 7 },
		"language":                        func(s *Settings) { s.Language = "de/../x" },
		"speech.language":                 func(s *Settings) { s.Speech.Language = "x" },
		"speech.engine":                   func(s *Settings) { s.Speech.Engine = "festival" },
		"speech.rate":                     func(s *Settings) { s.Speech.Rate = 300 },
		"speech.pitch":                    func(s *Settings) { s.Speech.Pitch = 10 },
		"audio.max_volume":                func(s *Settings) { s.Audio.MaxVolume = 0 },
		"audio.startup_volume":            func(s *Settings) { s.Audio.StartupVolume = 90 },
		"audio.announcement_volume":       func(s *Settings) { s.Audio.AnnouncementVolume = 101 },
		"audio.min_volume must be 0..":    func(s *Settings) { s.Audio.MinVolume = -1 },
		"audio.min_volume must be 0..max": func(s *Settings) { s.Audio.MinVolume = 81 },
		"audio.startup_volume must not":   func(s *Settings) { s.Audio.MinVolume, s.Audio.StartupVolume = 40, 30 },
		"audio.normalize":                 func(s *Settings) { s.Audio.Normalize = "album" },
		"display.idle_off_minutes":        func(s *Settings) { s.Display.IdleOffMinutes = -1 },
		"display.brightness":              func(s *Settings) { s.Display.Brightness = 0 },
		"power.idle_shutdown_minutes":     func(s *Settings) { s.Power.IdleShutdownMinutes = 5000 },
		"time_zone":                       func(s *Settings) { s.TimeZone = "Local" },
		"host_name":                       func(s *Settings) { s.HostName = "-box" },
		"allowed_hosts[1]":                func(s *Settings) { s.AllowedHosts = []string{"box.fritz.box", "box:8090"} },
		"allowed_hosts takes at most 16":  func(s *Settings) { s.AllowedHosts = make([]string, 17) },
	} {
		s := Defaults()
		mutate(&s)
		err := s.Validate()
		if !errors.Is(err, fault.Invalid) || !strings.HasPrefix(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	s := Defaults()
	s.TimeZone, s.HostName, s.AllowedHosts = "America/Argentina/Buenos_Aires", "kinderbox-2", []string{"box.fritz.box", "Box.LAN"}
	s.Speech = Speech{Language: "en-GB", Engine: "espeak", Rate: 50, Pitch: 200}
	s.Audio.MinVolume = s.Audio.StartupVolume // the floor may be the startup volume itself
	if err := s.Validate(); err != nil {
		t.Errorf("valid settings refused: %v", err)
	}
	for _, h := range []string{"1.2.3.4", "", "a..b", "under_score.lan", strings.Repeat("a", 64) + ".lan", "[::1]"} {
		if IsHostName(h) {
			t.Errorf("%q taken as a host name", h)
		}
	}
}

func TestParseIsStrict(t *testing.T) {
	for _, bad := range []string{`{"volume":3}`, `{} {}`, `[]`, `{"version":2}`, `{"audio":{"max_volume":0}}`} {
		if err := Check([]byte(bad)); !errors.Is(err, fault.Invalid) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if s, err := Parse([]byte(`{"language":"en"}`)); err != nil || s.Language != "en" || s.Audio != Defaults().Audio {
		t.Errorf("%+v %v", s, err)
	}
}

func TestStorePutSavesValidatesAndNotifies(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var seen [][2]int
	st.OnChange(func(old, new Settings) { seen = append(seen, [2]int{old.Audio.MaxVolume, new.Audio.MaxVolume}) })
	s := st.Get()
	s.Audio.MaxVolume, s.Audio.StartupVolume = 40, 20
	if err := st.Put(s); err != nil {
		t.Fatal(err)
	}
	bad := st.Get()
	bad.Audio.MaxVolume = 500
	if err := st.Put(bad); !errors.Is(err, fault.Invalid) {
		t.Fatalf("invalid put: %v", err)
	}
	if got := st.Get().Audio.MaxVolume; got != 40 {
		t.Errorf("a refused put changed the settings: %d", got)
	}
	disk, err := Load(dir)
	if err != nil || !reflect.DeepEqual(disk, st.Get()) {
		t.Errorf("on disk %+v %v, in memory %+v", disk, err, st.Get())
	}
	if !reflect.DeepEqual(seen, [][2]int{{80, 40}}) {
		t.Errorf("notifications %v", seen)
	}
	// The caller's copy is its own.
	g := st.Get()
	g.AllowedHosts = append(g.AllowedHosts, "x.lan")
	if len(st.Get().AllowedHosts) != 0 {
		t.Error("Get shares its slice")
	}
	// Reload takes a file replaced underneath.
	s.Language = "en"
	if err := Save(dir, s); err != nil {
		t.Fatal(err)
	}
	if err := st.Reload(); err != nil || st.Get().Language != "en" || len(seen) != 2 {
		t.Errorf("reload: %v %+v %v", err, st.Get(), seen)
	}
}

func TestBoxIDIsPersistent(t *testing.T) {
	dir := t.TempDir()
	a, err := BoxID(dir)
	if err != nil || len(a) != 36 {
		t.Fatalf("%q %v", a, err)
	}
	if b, _ := BoxID(dir); b != a {
		t.Errorf("box id changed: %s -> %s", a, b)
	}
	if err := os.WriteFile(filepath.Join(dir, "box_id"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := BoxID(dir); c == a || len(c) != 36 {
		t.Errorf("a corrupt id must be replaced by a new UUID, got %q", c)
	}
}
