package library

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dhowden/tag"
	"github.com/storybox/storybox/services/playerd/internal/decode"
)

var coverNames = []string{"cover.jpg", "cover.jpeg", "cover.png", "folder.jpg", "folder.jpeg", "folder.png"}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

type scanner struct {
	rootReal string
	cache    *cache
	seen     map[string]bool // cache keys met in this scan
	visited  map[string]bool // real directories, against symlink loops
	folders  []Folder
	stats    Stats
}

func scan(root string, c *cache) ([]Folder, Stats, error) {
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, Stats{}, err
	}
	if rootReal, err = filepath.Abs(rootReal); err != nil {
		return nil, Stats{}, err
	}
	s := &scanner{rootReal: rootReal, cache: c, seen: map[string]bool{}, visited: map[string]bool{}}
	if err := s.dir(rootReal, ""); err != nil {
		return nil, Stats{}, err
	}
	s.stats.Gone = c.prune(s.seen)
	slices.SortFunc(s.folders, func(a, b Folder) int {
		if naturalLess(a.Relative, b.Relative) {
			return -1
		}
		return 1
	})
	s.stats.Folders = len(s.folders)
	return s.folders, s.stats, nil
}

// within reports whether real (a resolved path) lies inside the media root.
func (s *scanner) within(real string) bool {
	return real == s.rootReal || strings.HasPrefix(real, s.rootReal+string(filepath.Separator))
}

func (s *scanner) dir(real, rel string) error {
	if s.visited[real] {
		return nil
	}
	s.visited[real] = true
	entries, err := os.ReadDir(real)
	if err != nil {
		if rel == "" {
			return err
		}
		s.stats.Skipped++
		return nil
	}
	var audio []string
	var cover string
	for _, e := range entries {
		name := e.Name()
		if hidden(name) {
			continue
		}
		path := filepath.Join(real, name)
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			// A link is followed only when it stays inside the media root,
			// so the API can never reach other files on the box.
			target, err := filepath.EvalSymlinks(path)
			if err != nil || !s.within(target) {
				s.stats.Skipped++
				continue
			}
			fi, err := os.Stat(target)
			if err != nil {
				s.stats.Skipped++
				continue
			}
			path, isDir = target, fi.IsDir()
		}
		switch {
		case isDir:
			if err := s.dir(path, filepath.Join(rel, name)); err != nil {
				return err
			}
		case decode.IsAudio(name):
			audio = append(audio, name)
		case cover == "" && slices.Contains(coverNames, strings.ToLower(name)):
			cover = path
		}
	}
	if len(audio) == 0 {
		return nil
	}
	s.folder(real, rel, audio, cover)
	return nil
}

func (s *scanner) folder(real, rel string, names []string, cover string) {
	slices.SortFunc(names, func(a, b string) int {
		if naturalLess(a, b) {
			return -1
		}
		return 1
	})
	name := filepath.Base(rel)
	if rel == "" {
		name = "Media"
	}
	f := Folder{ID: ID(rel), Name: name, Relative: filepath.ToSlash(rel), coverFile: cover}
	for _, n := range names {
		path := filepath.Join(real, n)
		trackRel := filepath.ToSlash(filepath.Join(rel, n))
		info, ok := s.probe(path, trackRel)
		if !ok {
			s.stats.Skipped++
			continue
		}
		title := info.Title
		if title == "" {
			title = strings.TrimSuffix(n, filepath.Ext(n))
		}
		f.Tracks = append(f.Tracks, Track{
			ID: ID(trackRel), Title: title, Artist: info.Artist, Album: info.Album,
			Duration: info.Duration, Provider: "local", ResumePolicy: "position",
			Path: path, rel: trackRel,
		})
		if f.coverTrack == "" && info.Picture {
			f.coverTrack = path
		}
	}
	if len(f.Tracks) == 0 {
		return
	}
	if f.coverFile != "" || f.coverTrack != "" {
		c := "/api/cover/" + f.ID
		f.Cover = &c
	}
	s.stats.Tracks += len(f.Tracks)
	s.folders = append(s.folders, f)
}

// probe returns a file's tags and duration, from the cache when the file is
// unchanged.
func (s *scanner) probe(path, rel string) (fileInfo, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return fileInfo{}, false
	}
	s.seen[rel] = true
	if info, ok := s.cache.get(rel, st.Size(), st.ModTime().UnixNano()); ok {
		return info, true
	}
	info := fileInfo{Size: st.Size(), ModTime: st.ModTime().UnixNano()}
	if f, err := os.Open(path); err == nil {
		if m, err := tag.ReadFrom(f); err == nil {
			info.Title = strings.TrimSpace(m.Title())
			info.Artist = strings.TrimSpace(m.Artist())
			info.Album = strings.TrimSpace(m.Album())
			info.Picture = m.Picture() != nil
		}
		f.Close()
	}
	if d, format, err := decode.Open(path); err == nil {
		info.Duration = float64(d.Len()) / float64(format.SampleRate)
		d.Close()
	}
	s.stats.Read++
	s.cache.put(rel, info)
	return info, true
}
