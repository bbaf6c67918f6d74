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

	"github.com/storybox/storybox/services/playerd/internal/lang"
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
	Provider  string `json:"provider"`   // local-library | resume-list | radio | podcast
	SourceRef string `json:"source_ref"` // library path, or the resume row's size
}

const (
	ProviderLibrary  = "local-library"
	ProviderResume   = "resume-list"
	ProviderRadio    = "radio"   // the parent's stations
	ProviderPodcasts = "podcast" // the parent's podcasts
	FileName         = "home.json"
	resumeRowSize    = 10
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
func Build(c *Config, folders []library.Folder, resume map[string]state.ResumePoint, l lang.Lang) Home {
	h := Home{Categories: []Category{}}
	for _, cc := range c.Categories {
		cat := Category{ID: cc.ID, Labels: cc.Labels, Rows: []Row{}}
		for _, rc := range cc.Rows {
			row := Row{ID: rc.ID, Labels: rc.Labels}
			switch rc.Provider {
			case ProviderLibrary:
				row.Items = folderItems(folders, rc.SourceRef, wordsIn(l))
			case ProviderResume:
				n, err := strconv.Atoi(rc.SourceRef)
				if err != nil {
					n = resumeRowSize
				}
				row.Items = resumeItems(folders, resume, n)
			case ProviderRadio, ProviderPodcasts:
				row.Items = streamItems(folders, rc.Provider, wordsIn(l))
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

// words are the tiles' subtitles in one language: counts of one and of
// more, a station's.
type words struct{ track, tracks, episode, episodes, live string }

var wordsByLang = map[lang.Lang]words{
	lang.German:  {track: "1 Titel", tracks: "%d Titel", episode: "1 Folge", episodes: "%d Folgen", live: "Live-Radio"},
	lang.English: {track: "1 track", tracks: "%d tracks", episode: "1 episode", episodes: "%d episodes", live: "Live radio"},
}

// count is n things: one, or many (a format taking n).
func count(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf(many, n)
}

// wordsIn is the subtitles in l, or in the language lang.Of decides for
// a value that did not come from it.
func wordsIn(l lang.Lang) words {
	if w, ok := wordsByLang[l]; ok {
		return w
	}
	return wordsByLang[lang.Of(string(l)).UI]
}

func folderItems(folders []library.Folder, under string, w words) []Item {
	prefix := strings.Trim(filepath.ToSlash(under), "/")
	items := []Item{}
	for _, f := range folders {
		if f.Kind != "" && f.Kind != library.KindLocal {
			continue // stations and podcasts have rows of their own
		}
		if prefix != "" && f.Relative != prefix && !strings.HasPrefix(f.Relative, prefix+"/") {
			continue
		}
		items = append(items, Item{
			ID: f.ID, Kind: "local-folder", Title: f.Name, Subtitle: count(len(f.Tracks), w.track, w.tracks),
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
		// New podcast episodes move the old ones down: the track id
		// finds the one that was left.
		if i := slices.IndexFunc(e.f.Tracks, func(t library.Track) bool { return t.ID == e.rp.TrackID }); i >= 0 {
			idx = i
		}
		items = append(items, Item{
			ID: "resume-local-" + e.f.ID, Kind: "resume", Title: e.f.Name,
			Subtitle: fmt.Sprintf("%s · %d%%", e.f.Tracks[idx].Title, progress(e.f, idx, e.rp.Position)),
			Cover:    e.f.Cover, ResumePolicy: "position", Provider: ProviderLibrary, OfflineAvailable: true,
			Command: player.Command{Action: player.ActResume, FolderID: e.f.ID, ItemIndex: &idx},
		})
		if e.f.Kind == library.KindPodcast {
			items[len(items)-1].Provider, items[len(items)-1].OfflineAvailable = ProviderPodcasts, false
		}
	}
	return items
}

// progress is how far into the folder listening got, capped at 99 % so an
// unfinished folder never looks finished. A podcast's episodes are heard
// one by one: its progress is the episode's.
func progress(f library.Folder, index int, pos float64) int {
	if f.Kind == library.KindPodcast {
		if d := f.Tracks[index].Duration; d > 0 {
			return min(99, int(100*pos/d))
		}
		return 0
	}
	total := f.Duration()
	if total <= 0 {
		return min(99, 100*index/len(f.Tracks))
	}
	done := pos
	for _, t := range f.Tracks[:index] {
		done += t.Duration
	}
	return min(99, int(100*done/total))
}

// streamItems are the tiles of the parent's stations or podcasts.
func streamItems(folders []library.Folder, provider string, w words) []Item {
	kind, policy := library.KindRadio, library.ResumeNone
	if provider == ProviderPodcasts {
		kind, policy = library.KindPodcast, library.ResumePosition
	}
	items := []Item{}
	for _, f := range folders {
		if f.Kind != kind {
			continue
		}
		sub := w.live
		if kind == library.KindPodcast {
			sub = count(len(f.Tracks), w.episode, w.episodes)
		}
		items = append(items, Item{
			ID: f.ID, Kind: kind, Title: f.Name, Subtitle: sub, Cover: f.Cover, ResumePolicy: policy,
			Provider: provider, Command: player.Command{Action: player.ActFolder, FolderID: f.ID},
		})
	}
	return items
}

// WithStreams adds a category for the stations and one for the podcasts to
// the navigation derived from the library (no home.json); Build leaves them
// out while they are empty. Their ids differ from any a media folder gets.
func WithStreams(c *Config) *Config {
	out := *c
	out.Categories = append(append([]CategoryConfig(nil), c.Categories...),
		CategoryConfig{ID: "radio-stations", Labels: Labels{"de": "Radio", "en": "Radio"},
			Rows: []RowConfig{{ID: "radio", Labels: Labels{"de": "Radio", "en": "Radio"}, Provider: ProviderRadio}}},
		CategoryConfig{ID: "podcast-feeds", Labels: Labels{"de": "Podcasts", "en": "Podcasts"},
			Rows: []RowConfig{{ID: "podcasts", Labels: Labels{"de": "Podcasts", "en": "Podcasts"}, Provider: ProviderPodcasts}}},
	)
	return &out
}
