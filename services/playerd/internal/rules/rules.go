// Package rules is the box's parental controls: bedtime (quiet hours) with
// bedtime content and a night maximum volume, a daily listening limit, a
// sleep timer and locked folders.
//
// A Keeper holds the rules a parent set (Rules, parental.json) and what
// they need to remember (the listening counter). It is the player's Gate:
// every command and announcement passes Admit, whichever way it came, and
// is refused with a reason (Refusal, fault.Forbidden), admitted, or admitted
// with a limit (the night maximum volume). Keeper.Run ends playback when a
// rule says so (bedtime began, the limit ran out, the sleep timer expired),
// fading out through the player's own volume commands, which pass the same
// gate.
package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// FileName is the parent's rules in the data directory; it belongs in
// backups.
const FileName = "parental.json"

// Rules are what a parent sets. The zero value restricts nothing.
type Rules struct {
	Bedtime Bedtime `json:"bedtime"`
	// DailyLimitMinutes is the listening allowed per day, by weekday
	// ("mon".."sun"); a day that is absent has no limit, 0 allows none.
	DailyLimitMinutes map[string]int `json:"daily_limit_minutes"`
	// LockedFolders only an administrator session may start; the home
	// screen does not show them.
	LockedFolders []string `json:"locked_folders"`
}

// Bedtime are the quiet hours.
type Bedtime struct {
	// Windows by the weekday they begin on ("mon".."sun"); one that ends
	// at or before its start ends the next morning.
	Windows map[string]Window `json:"windows"`
	// Folders are the bedtime content (sleep stories, lullabies): they
	// may start inside a window, play at NightMaxVolume at most, and do
	// not count against the daily limit there.
	Folders []string `json:"folders"`
	// NightMaxVolume caps the volume inside a window (1..100); 0 leaves
	// the box's maximum.
	NightMaxVolume int `json:"night_max_volume"`
	// GraceMinutes: music that plays when a window begins ends this long
	// after; 0 lets it end with the current track.
	GraceMinutes int `json:"grace_minutes"`
}

// Window is one night: "HH:MM" local times.
type Window struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// Weekdays are the keys of the per-day maps, in time.Weekday order.
var Weekdays = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

func dayKey(d time.Weekday) string { return Weekdays[d] }

const (
	maxFolders      = 1000
	maxFolderID     = 128
	maxGraceMinutes = 240
)

func invalid(format string, a ...any) error { return fault.New(fault.Invalid, format, a...) }

// Validate checks every field and names the first one that is wrong.
func (r Rules) Validate() error {
	for day, w := range r.Bedtime.Windows {
		if !slices.Contains(Weekdays[:], day) {
			return invalid("bedtime.windows: %q is not a weekday (mon, tue, wed, thu, fri, sat, sun)", day)
		}
		start, err := parseClock(w.Start)
		if err != nil {
			return invalid("bedtime.windows.%s.start: %v", day, err)
		}
		end, err := parseClock(w.End)
		if err != nil {
			return invalid("bedtime.windows.%s.end: %v", day, err)
		}
		if start == end {
			return invalid("bedtime.windows.%s: start and end are both %s", day, w.Start)
		}
	}
	b := r.Bedtime
	if b.NightMaxVolume < 0 || b.NightMaxVolume > 100 {
		return invalid("bedtime.night_max_volume must be 1..100, or 0 for none, not %d", b.NightMaxVolume)
	}
	if b.GraceMinutes < 0 || b.GraceMinutes > maxGraceMinutes {
		return invalid("bedtime.grace_minutes must be 0..%d, not %d", maxGraceMinutes, b.GraceMinutes)
	}
	if err := checkFolders("bedtime.folders", b.Folders); err != nil {
		return err
	}
	for day, m := range r.DailyLimitMinutes {
		if !slices.Contains(Weekdays[:], day) {
			return invalid("daily_limit_minutes: %q is not a weekday (mon, tue, wed, thu, fri, sat, sun)", day)
		}
		if m < 0 || m > 24*60 {
			return invalid("daily_limit_minutes.%s must be 0..1440, not %d", day, m)
		}
	}
	return checkFolders("locked_folders", r.LockedFolders)
}

func checkFolders(field string, ids []string) error {
	if len(ids) > maxFolders {
		return invalid("%s: at most %d folders, not %d", field, maxFolders, len(ids))
	}
	for i, id := range ids {
		if id == "" || len(id) > maxFolderID {
			return invalid("%s[%d]: a folder id from /api/library, not %q", field, i, id)
		}
		if slices.Contains(ids[:i], id) {
			return invalid("%s: %q is listed twice", field, id)
		}
	}
	return nil
}

// parseClock reads "HH:MM" into minutes after midnight.
func parseClock(s string) (int, error) {
	if len(s) != 5 || s[2] != ':' {
		return 0, fmt.Errorf("want HH:MM, not %q", s)
	}
	h, err1 := strconv.Atoi(s[:2])
	m, err2 := strconv.Atoi(s[3:])
	if err1 != nil || err2 != nil || h < 0 || h > 23 || m < 0 || m > 59 || s[0] == '+' || s[3] == '+' {
		return 0, fmt.Errorf("want HH:MM from 00:00 to 23:59, not %q", s)
	}
	return h*60 + m, nil
}

// Folders the rules name, for a check against the library.
func (r Rules) Folders() []string {
	return slices.Concat(r.Bedtime.Folders, r.LockedFolders)
}

// normal gives empty lists and maps instead of null, so the document reads
// the same however it was written.
func (r Rules) normal() Rules {
	if r.Bedtime.Windows == nil {
		r.Bedtime.Windows = map[string]Window{}
	}
	if r.Bedtime.Folders == nil {
		r.Bedtime.Folders = []string{}
	}
	if r.DailyLimitMinutes == nil {
		r.DailyLimitMinutes = map[string]int{}
	}
	if r.LockedFolders == nil {
		r.LockedFolders = []string{}
	}
	return r
}

// Clone returns a deep copy.
func (r Rules) Clone() Rules {
	c := r
	c.Bedtime.Windows = cloneMap(r.Bedtime.Windows)
	c.Bedtime.Folders = slices.Clone(r.Bedtime.Folders)
	c.DailyLimitMinutes = cloneMap(r.DailyLimitMinutes)
	c.LockedFolders = slices.Clone(r.LockedFolders)
	return c.normal()
}

func cloneMap[V any](m map[string]V) map[string]V {
	c := make(map[string]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Parse decodes and validates a rules document: unknown fields and
// trailing data are errors (fault.Invalid).
func Parse(data []byte) (Rules, error) {
	var r Rules
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Rules{}, invalid("parental rules: %v", err)
	}
	if dec.More() {
		return Rules{}, invalid("parental rules: trailing data")
	}
	if err := r.Validate(); err != nil {
		return Rules{}, err
	}
	return r.normal(), nil
}

// Check validates a rules file, as a restore does before it replaces one.
func Check(data []byte) error {
	_, err := Parse(data)
	return err
}

// Load reads the rules from dataDir. A missing file restricts nothing; a
// file that does not parse is an error, and the rules are empty then (the
// file stays for the parent to fix).
func Load(dataDir string) (Rules, error) {
	var raw json.RawMessage
	err := state.ReadJSON(filepath.Join(dataDir, FileName), &raw)
	if errors.Is(err, fs.ErrNotExist) {
		return Rules{}.normal(), nil
	}
	if err != nil {
		return Rules{}.normal(), fmt.Errorf("rules: %w", err)
	}
	r, err := Parse(raw)
	if err != nil {
		return Rules{}.normal(), fmt.Errorf("rules: %s: %w", FileName, err)
	}
	return r, nil
}

// Save writes the rules to dataDir atomically: after a power cut the file
// holds the old rules or the new ones. A failure is of kind
// fault.Unavailable, naming what failed without a path.
func Save(dataDir string, r Rules) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if err := state.WriteJSON(filepath.Join(dataDir, FileName), r.normal()); err != nil {
		return fault.Wrap(fault.Unavailable, err, "cannot save the parental rules")
	}
	return nil
}
