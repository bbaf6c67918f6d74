package library

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/decode"
)

var coverNames = []string{"cover.jpg", "cover.jpeg", "cover.png", "folder.jpg", "folder.jpeg", "folder.png"}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

func isCoverName(name string) bool { return slices.Contains(coverNames, strings.ToLower(name)) }

type scanner struct {
	ctx      context.Context
	rootReal string
	cache    *cache
	seen     map[string]bool // cache keys met in this scan
	visited  map[string]bool // real directories, against symlink loops
	folders  []Folder
	problems []Problem
	stats    Stats
	// cachedOnly lists only files the cache knows, reading none: the quick
	// view at start.
	cachedOnly bool
}

func scan(ctx context.Context, root string, c *cache, cachedOnly bool) (*scanner, error) {
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if rootReal, err = filepath.Abs(rootReal); err != nil {
		return nil, err
	}
	s := &scanner{ctx: ctx, rootReal: rootReal, cache: c, seen: map[string]bool{}, visited: map[string]bool{}, cachedOnly: cachedOnly}
	if err := s.dir(rootReal, ""); err != nil {
		return nil, err
	}
	if !cachedOnly {
		s.stats.Gone = c.prune(s.seen)
	}
	slices.SortFunc(s.folders, func(a, b Folder) int {
		if naturalLess(a.Relative, b.Relative) {
			return -1
		}
		return 1
	})
	s.stats.Folders = len(s.folders)
	return s, nil
}

// within reports whether real (a resolved path) lies inside the media root.
func (s *scanner) within(real string) bool {
	return real == s.rootReal || strings.HasPrefix(real, s.rootReal+string(filepath.Separator))
}

func (s *scanner) dir(real, rel string) error {
	if s.visited[real] {
		return nil
	}
	if err := s.ctx.Err(); err != nil {
		return err
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
		case cover == "" && isCoverName(name):
			cover = path
		}
	}
	if len(audio) == 0 {
		return nil
	}
	return s.folder(real, rel, audio, cover)
}

func (s *scanner) folder(real, rel string, names []string, cover string) error {
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
		if err := s.ctx.Err(); err != nil {
			return err
		}
		path := filepath.Join(real, n)
		trackRel := filepath.ToSlash(filepath.Join(rel, n))
		info, ok := s.probe(path, trackRel)
		if !ok {
			if !s.cachedOnly {
				s.stats.Skipped++
			}
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
		return nil
	}
	if f.coverFile != "" || f.coverTrack != "" {
		c := "/api/cover/" + f.ID
		f.Cover = &c
	}
	s.stats.Tracks += len(f.Tracks)
	s.folders = append(s.folders, f)
	return nil
}

// probe returns a file's tags and duration, from the cache when the file is
// unchanged; ok is false for a file that cannot be played. Problems are
// recorded either way.
func (s *scanner) probe(path, rel string) (fileInfo, bool) {
	st, err := os.Stat(path)
	if err != nil {
		s.problem(rel, err.Error())
		return fileInfo{}, false
	}
	s.seen[rel] = true
	info, ok := s.cache.get(rel, st.Size(), st.ModTime().UnixNano())
	if !ok {
		if s.cachedOnly {
			return fileInfo{}, false
		}
		info = read(path, st)
		s.stats.Read++
		s.cache.put(rel, info)
	}
	if info.Error != "" {
		s.problem(rel, info.Error)
		return info, false
	}
	if info.TagError != "" {
		s.problem(rel, info.TagError)
	}
	return info, true
}

// read opens a file through the decoder boundary, which turns whatever a
// damaged or hostile file does to a decoder into an error for that file.
func read(path string, st os.FileInfo) fileInfo {
	info := fileInfo{Size: st.Size(), ModTime: st.ModTime().UnixNano()}
	d, format, err := decode.Open(path)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	info.Duration = float64(d.Len()) / float64(format.SampleRate)
	d.Close()
	t, err := decode.ReadTags(path)
	switch {
	case errors.Is(err, decode.ErrNoTags):
	case err != nil:
		info.TagError = err.Error()
	default:
		info.Title, info.Artist, info.Album = t.Title, t.Artist, t.Album
		info.Picture = t.Picture != nil
	}
	return info
}

// maxProblems bounds the list a scan keeps: a broken disk should not turn
// into a huge status document.
const maxProblems = 100

func (s *scanner) problem(rel, msg string) {
	s.stats.Problems++
	if len(s.problems) < maxProblems {
		s.problems = append(s.problems, Problem{Path: rel, Error: msg})
	}
}
