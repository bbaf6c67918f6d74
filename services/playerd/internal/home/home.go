// Package home builds the home screen model (GET /api/home): categories of
// rows of playable items, each carrying the command that plays it.
package home

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Labels are texts by language.
type Labels map[string]string

// Home is the body of GET /api/home.
type Home struct {
	Categories []Category `json:"categories"`
}

type Category struct {
	ID     string `json:"id"`
	Labels Labels `json:"labels"`
	Rows   []Row  `json:"rows"`
}

type Row struct {
	ID     string `json:"id"`
	Labels Labels `json:"labels"`
	Items  []Item `json:"items"`
}

// Item is one tile. Command is exactly what POST /api/command takes.
type Item struct {
	ID               string         `json:"id"`
	Kind             string         `json:"kind"`
	Title            string         `json:"title"`
	Subtitle         string         `json:"subtitle"`
	Cover            *string        `json:"cover"`
	ResumePolicy     string         `json:"resume_policy"`
	Provider         string         `json:"provider"`
	OfflineAvailable bool           `json:"offline_available"`
	Command          player.Command `json:"command"`
}

// Config is the navigation a parent sets (home.json in the data directory,
// GET|PUT /api/admin/navigation), in the real box's shape: rows take their
// items from a library path ("local-library") or from the resume points
// ("resume-list"). navigation.go validates and saves it.
type Config struct {
	Version    int              `json:"version"`
	Categories []CategoryConfig `json:"categories"`
}

type CategoryConfig struct {
	ID     string      `json:"id"`
	Labels Labels      `json:"labels"`
	Rows   []RowConfig `json:"rows"`
}

type RowConfig struct {
	ID        string `json:"id"`
	Labels    Labels `json:"labels"`
	Provider  string `json:"provider"`   // local-library | resume-list
	SourceRef string `json:"source_ref"` // library path, or the resume row's size
}

const (
	ProviderLibrary = "local-library"
	ProviderResume  = "resume-list"
	FileName        = "home.json"
	resumeRowSize   = 10
)

// LoadConfig reads home.json. Without one the categories are derived from
// the library; a broken one is reported and the defaults are used.
func LoadConfig(dataDir string) (*Config, error) {
	var c Config
	err := state.ReadJSON(filepath.Join(dataDir, FileName), &c)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		if c.Version == 0 { // written before the format had a version
			c.Version = Version
		}
		err = c.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("home: %w (using defaults)", err)
	}
	return &c, nil
}

// Defaults derives the navigation from the library: a "continue" row, then
// one category per top-level media folder.
func Defaults(topLevel []string) *Config {
	c := &Config{Version: Version, Categories: []CategoryConfig{{
		ID: "continue", Labels: Labels{"de": "Weiterhören", "en": "Continue"},
		Rows: []RowConfig{{ID: "resume", Labels: Labels{"de": "Weiterhören", "en": "Continue"}, Provider: ProviderResume}},
	}}}
	for _, name := range topLevel {
		c.Categories = append(c.Categories, CategoryConfig{
			ID: slug(name), Labels: Labels{"de": name, "en": name},
			Rows: []RowConfig{{ID: slug(name), Labels: Labels{"de": name, "en": name}, Provider: ProviderLibrary, SourceRef: name}},
		})
	}
	if len(topLevel) == 0 {
		c.Categories = append(c.Categories, CategoryConfig{
			ID: "music", Labels: Labels{"de": "Musik", "en": "Music"},
			Rows: []RowConfig{{ID: "local-library", Labels: Labels{"de": "Alles", "en": "Everything"}, Provider: ProviderLibrary}},
		})
	}
	return c
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	s = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "ß", "ss").Replace(strings.ToLower(s))
	return strings.Trim(nonSlug.ReplaceAllString(s, "-"), "-")
}

// Build makes the model. Empty rows and categories are left out, so a child
// never sees an empty screen section.
func Build(c *Config, folders []library.Folder, resume map[string]state.ResumePoint, lang string) Home {
	h := Home{Categories: []Category{}}
	for _, cc := range c.Categories {
		cat := Category{ID: cc.ID, Labels: cc.Labels, Rows: []Row{}}
		for _, rc := range cc.Rows {
			row := Row{ID: rc.ID, Labels: rc.Labels}
			switch rc.Provider {
			case ProviderLibrary:
				row.Items = folderItems(folders, rc.SourceRef, lang)
			case ProviderResume:
				n, err := strconv.Atoi(rc.SourceRef)
				if err != nil {
					n = resumeRowSize
				}
				row.Items = resumeItems(folders, resume, n)
			}
			if len(row.Items) > 0 {
				cat.Rows = append(cat.Rows, row)
			}
		}
		if len(cat.Rows) > 0 {
			h.Categories = append(h.Categories, cat)
		}
	}
	return h
}

func folderItems(folders []library.Folder, under, lang string) []Item {
	prefix := strings.Trim(filepath.ToSlash(under), "/")
	items := []Item{}
	for _, f := range folders {
		if prefix != "" && f.Relative != prefix && !strings.HasPrefix(f.Relative, prefix+"/") {
			continue
		}
		unit := "Titel"
		if lang != "de" {
			unit = "tracks"
		}
		items = append(items, Item{
			ID: f.ID, Kind: "local-folder", Title: f.Name, Subtitle: fmt.Sprintf("%d %s", len(f.Tracks), unit),
			Cover: f.Cover, ResumePolicy: "position", Provider: ProviderLibrary, OfflineAvailable: true,
			Command: player.Command{Action: player.ActFolder, FolderID: f.ID},
		})
	}
	return items
}

// resumeItems lists the folders left unfinished, most recent first.
func resumeItems(folders []library.Folder, resume map[string]state.ResumePoint, limit int) []Item {
	type entry struct {
		f  library.Folder
		rp state.ResumePoint
	}
	var entries []entry
	for _, f := range folders {
		if rp, ok := resume[f.ID]; ok && rp.Index >= 0 && rp.Index < len(f.Tracks) {
			entries = append(entries, entry{f, rp})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return b.rp.UpdatedAt.Compare(a.rp.UpdatedAt) })
	items := []Item{}
	for _, e := range entries[:min(limit, len(entries))] {
		idx := e.rp.Index
		items = append(items, Item{
			ID: "resume-local-" + e.f.ID, Kind: "resume", Title: e.f.Name,
			Subtitle: fmt.Sprintf("%s · %d%%", e.f.Tracks[idx].Title, progress(e.f, e.rp)),
			Cover:    e.f.Cover, ResumePolicy: "position", Provider: ProviderLibrary, OfflineAvailable: true,
			Command: player.Command{Action: player.ActResume, FolderID: e.f.ID, ItemIndex: &idx},
		})
	}
	return items
}

// progress is how far into the folder listening got, capped at 99 % so an
// unfinished folder never looks finished.
func progress(f library.Folder, rp state.ResumePoint) int {
	total := f.Duration()
	if total <= 0 {
		return min(99, 100*rp.Index/len(f.Tracks))
	}
	done := rp.Position
	for _, t := range f.Tracks[:rp.Index] {
		done += t.Duration
	}
	return min(99, int(100*done/total))
}
