package home

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Version is the format of home.json this box writes.
const Version = 1

// Limits of the navigation: a screen of tabs, each with a few rows.
const (
	MaxCategories = 32
	MaxRows       = 32
	maxID         = 64
	maxLabels     = 8
	maxLabel      = 80
	maxSourceRef  = 1024
)

func invalid(format string, a ...any) error { return fault.New(fault.Invalid, format, a...) }

// Validate checks the document; the error (fault.Invalid) names the first
// field that is wrong as its path (categories[1].rows[0].source_ref).
// Library paths must be plain relative paths below the media root; whether
// the folders exist is CheckFolders' question.
func (c *Config) Validate() error {
	if c.Version != Version {
		return invalid("version must be %d, not %d", Version, c.Version)
	}
	if len(c.Categories) > MaxCategories {
		return invalid("categories: at most %d, not %d", MaxCategories, len(c.Categories))
	}
	cats := map[string]bool{}
	for i, cat := range c.Categories {
		at := fmt.Sprintf("categories[%d]", i)
		if err := checkID(at+".id", cat.ID); err != nil {
			return err
		}
		if cats[cat.ID] {
			return invalid("%s.id %q is used twice", at, cat.ID)
		}
		cats[cat.ID] = true
		if err := checkLabels(at+".labels", cat.Labels); err != nil {
			return err
		}
		if len(cat.Rows) > MaxRows {
			return invalid("%s.rows: at most %d, not %d", at, MaxRows, len(cat.Rows))
		}
		rows := map[string]bool{}
		for j, r := range cat.Rows {
			at := fmt.Sprintf("%s.rows[%d]", at, j)
			if err := checkID(at+".id", r.ID); err != nil {
				return err
			}
			if rows[r.ID] {
				return invalid("%s.id %q is used twice in its category", at, r.ID)
			}
			rows[r.ID] = true
			if err := checkLabels(at+".labels", r.Labels); err != nil {
				return err
			}
			switch r.Provider {
			case ProviderLibrary:
				if err := checkLibraryPath(at+".source_ref", r.SourceRef); err != nil {
					return err
				}
			case ProviderResume:
				if n, err := strconv.Atoi(r.SourceRef); r.SourceRef != "" && (err != nil || n < 1 || n > 100) {
					return invalid("%s.source_ref of a resume-list must be empty or 1..100, not %q", at, r.SourceRef)
				}
			default:
				return invalid("%s.provider must be %s or %s, not %q", at, ProviderLibrary, ProviderResume, r.Provider)
			}
		}
	}
	return nil
}

func checkID(at, id string) error {
	if id == "" || len(id) > maxID || strings.ContainsFunc(id, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return invalid("%s must be 1..%d characters without control characters", at, maxID)
	}
	return nil
}

func checkLabels(at string, ls Labels) error {
	if len(ls) > maxLabels {
		return invalid("%s: at most %d languages", at, maxLabels)
	}
	for lang, text := range ls {
		if lang == "" || len(lang) > 16 || strings.ContainsAny(lang, "/\\ ") {
			return invalid("%s: %q is not a language code", at, lang)
		}
		if !utf8.ValidString(text) || utf8.RuneCountInString(text) > maxLabel {
			return invalid("%s.%s must be valid text of at most %d characters", at, lang, maxLabel)
		}
	}
	return nil
}

// checkLibraryPath accepts "" (the whole library) and clean relative paths
// with "/" between names: nothing absolute, no "." or "..", no backslash.
func checkLibraryPath(at, ref string) error {
	if ref == "" {
		return nil
	}
	bad := len(ref) > maxSourceRef || !utf8.ValidString(ref) || strings.ContainsAny(ref, "\\\x00") ||
		path.IsAbs(ref) || filepath.IsAbs(ref) || path.Clean(ref) != ref
	for _, part := range strings.Split(ref, "/") {
		bad = bad || part == "." || part == ".." || part == ""
	}
	if bad {
		return invalid("%s must be a folder path below the media root such as Hoerspiele/Folge 1, not %q", at, ref)
	}
	return nil
}

// CheckFolders checks that every library row names a folder that exists:
// isDir answers for a path below the media root.
func (c *Config) CheckFolders(isDir func(rel string) bool) error {
	for i, cat := range c.Categories {
		for j, r := range cat.Rows {
			if r.Provider == ProviderLibrary && r.SourceRef != "" && !isDir(r.SourceRef) {
				return invalid("categories[%d].rows[%d].source_ref: there is no folder %q in the library", i, j, r.SourceRef)
			}
		}
	}
	return nil
}

// Renamed follows a folder renamed from old to new (paths below the media
// root) in the library rows; it reports whether any row changed.
func (c *Config) Renamed(old, new string) bool {
	changed := false
	for i := range c.Categories {
		for j := range c.Categories[i].Rows {
			r := &c.Categories[i].Rows[j]
			if r.Provider != ProviderLibrary {
				continue
			}
			if r.SourceRef == old {
				r.SourceRef, changed = new, true
			} else if rest, ok := strings.CutPrefix(r.SourceRef, old+"/"); ok {
				r.SourceRef, changed = new+"/"+rest, true
			}
		}
	}
	return changed
}

// Clone returns a deep copy.
func (c *Config) Clone() *Config {
	data, _ := json.Marshal(c) // plain data: cannot fail
	var out Config
	_ = json.Unmarshal(data, &out)
	return &out
}

// Parse decodes a whole navigation document strictly (unknown fields and
// trailing data are refused) and validates it: the check for home.json in
// a backup.
func Parse(data []byte) (*Config, error) {
	c := Config{Version: Version}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, invalid("not a navigation document: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalid("not a navigation document: data after the object")
	}
	return &c, c.Validate()
}

// Check is Parse for callers that only need the verdict.
func Check(data []byte) error {
	_, err := Parse(data)
	return err
}

// Save writes c atomically after validating it.
func Save(dataDir string, c *Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := state.WriteJSON(filepath.Join(dataDir, FileName), c); err != nil {
		return fmt.Errorf("home: %w", err)
	}
	return nil
}
