package library

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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

	// The walk lists folders and their files first; the files the cache
	// does not know are then read in parallel, and the folders built in
	// the walk's order, so the outcome does not depend on which read ends
	// first.
	pending []pendingFolder
	files   []pendingFile
	strings map[string]string // artist and album names, shared by the tracks
	// progress reports files found and files whose tags and duration are
	// known, as they change; it may be called from several goroutines.
	progress func(found, done int)
	found    int
	done     atomic.Int64
	gate     <-chan struct{} // nil, or closed when reads may start (HoldReads)
}

type pendingFolder struct {
	f           Folder // without its tracks
	first, last int    // its files: files[first:last]
}

type pendingFile struct {
	name, path, rel string
	size, mtime     int64
	statErr         string // the file could not be looked at
	known           bool   // info is from the cache
	info            fileInfo
}

func scan(ctx context.Context, root string, c *cache, cachedOnly bool, progress func(found, done int), gate <-chan struct{}) (*scanner, error) {
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if rootReal, err = filepath.Abs(rootReal); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(int, int) {}
	}
	s := &scanner{ctx: ctx, rootReal: rootReal, cache: c, seen: map[string]bool{}, visited: map[string]bool{},
		cachedOnly: cachedOnly, strings: map[string]string{}, progress: progress, gate: gate}
	if err := s.dir(rootReal, ""); err != nil {
		return nil, err
	}
	if err := s.readAll(); err != nil {
		return nil, err
	}
	for _, p := range s.pending {
		s.build(p)
	}
	s.pending, s.files = nil, nil
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
	s.folder(real, rel, audio, cover)
	return nil
}

// folder lists a directory's audio files, taking what the cache knows.
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
	p := pendingFolder{f: Folder{ID: ID(rel), Kind: KindLocal, Name: name, Relative: filepath.ToSlash(rel), coverFile: cover}, first: len(s.files)}
	known := 0
	for _, n := range names {
		f := pendingFile{name: n, path: filepath.Join(real, n), rel: filepath.ToSlash(filepath.Join(rel, n))}
		if strings.HasSuffix(f.path, string(filepath.Separator)+f.rel) {
			f.rel = f.path[len(f.path)-len(f.rel):] // one string for both, as the track keeps both
		}
		if s.cachedOnly {
			// The quick view believes the cache without looking at the
			// file: on a card, 10,000 inodes take seconds to read, and the
			// full scan right after corrects what changed.
			f.info, f.known = s.cache.Files[f.rel]
		} else if st, err := os.Stat(f.path); err != nil {
			f.statErr = err.Error()
		} else {
			f.size, f.mtime = st.Size(), st.ModTime().UnixNano()
			f.info, f.known = s.cache.get(f.rel, f.size, f.mtime)
		}
		if f.statErr != "" || f.known || s.cachedOnly {
			known++
		}
		s.files = append(s.files, f)
	}
	p.last = len(s.files)
	s.pending = append(s.pending, p)
	s.found += len(names)
	s.progress(s.found, int(s.done.Add(int64(known))))
}

// readAll reads the files the cache does not know, as many at once as
// there are cores: a scan is mostly parsing headers, and the reads of one
// file wait on the card while another's are parsed.
func (s *scanner) readAll() error {
	var todo []int
	for i, f := range s.files {
		if f.statErr == "" && !f.known && !s.cachedOnly {
			todo = append(todo, i)
		}
	}
	if s.gate != nil && len(todo) > 0 {
		select {
		case <-s.gate:
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(todo)) {
		wg.Go(func() {
			for s.ctx.Err() == nil {
				k := int(next.Add(1)) - 1
				if k >= len(todo) {
					return
				}
				f := &s.files[todo[k]]
				f.info = read(f.path, f.size, f.mtime)
				s.progress(s.found, int(s.done.Add(1)))
			}
		})
	}
	wg.Wait()
	return s.ctx.Err()
}

// build makes a folder of its files, in the walk's order, and records what
// the scan learnt: cache entries, problems, counts.
func (s *scanner) build(p pendingFolder) {
	f := p.f
	// The view keeps the list for good: no room for tracks never added.
	f.Tracks = make([]Track, 0, p.last-p.first)
	for i := p.first; i < p.last; i++ {
		info, ok := s.probe(&s.files[i])
		if !ok {
			if !s.cachedOnly {
				s.stats.Skipped++
			}
			continue
		}
		pf := &s.files[i]
		title := info.Title
		if title == "" {
			title = strings.TrimSuffix(pf.name, filepath.Ext(pf.name))
		}
		if len(info.Chapters) > 1 {
			f.Tracks = append(f.Tracks, chapterTracks(s, pf, info)...)
		} else {
			f.Tracks = append(f.Tracks, Track{
				ID: ID(pf.rel), Title: title, Artist: s.intern(info.Artist), Album: s.intern(info.Album),
				Duration: info.Duration, Provider: "local", ResumePolicy: "position",
				Path: pf.path, rel: pf.rel,
			})
		}
		if f.coverTrack == "" && info.Picture {
			f.coverTrack = pf.path
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

// chapterTracks lists an audiobook's chapters as tracks of their own: a
// child skips through them like the tracks of an album, and each resumes
// where it stopped. A chapter's ID and path carry its number after the
// file's (decode.ChapterPath), so decode.Open plays that chapter alone.
func chapterTracks(s *scanner, pf *pendingFile, info fileInfo) []Track {
	tracks := make([]Track, 0, len(info.Chapters))
	for i, c := range info.Chapters {
		n := strconv.Itoa(i + 1)
		tracks = append(tracks, Track{
			ID: ID(pf.rel + "#" + n), Title: c.Title, Artist: s.intern(info.Artist), Album: s.intern(info.Album),
			Duration: c.End - c.Start, Provider: "local", ResumePolicy: "position",
			Path: decode.ChapterPath(pf.path, i+1), rel: pf.rel + "#" + n,
		})
	}
	return tracks
}

// intern shares one copy of a name many tracks carry (an artist, an
// album) among them.
func (s *scanner) intern(v string) string {
	if v == "" {
		return ""
	}
	if w, ok := s.strings[v]; ok {
		return w
	}
	s.strings[v] = v
	return v
}

// probe returns a file's tags and duration, from the cache when the file is
// unchanged; ok is false for a file that cannot be played. Problems are
// recorded either way.
func (s *scanner) probe(f *pendingFile) (fileInfo, bool) {
	if f.statErr != "" {
		s.problem(f.rel, f.statErr)
		return fileInfo{}, false
	}
	s.seen[f.rel] = true
	info := f.info
	if !f.known {
		if s.cachedOnly {
			return fileInfo{}, false
		}
		s.stats.Read++
		s.cache.put(f.rel, info)
	}
	if info.Error != "" {
		s.problem(f.rel, info.Error)
		return info, false
	}
	if info.TagError != "" {
		s.problem(f.rel, info.TagError)
	}
	if info.Notice != "" {
		s.problem(f.rel, info.Notice)
	}
	return info, true
}

// read looks into a file through the decoder boundary, which turns
// whatever a damaged or hostile file does to a decoder into an error for
// that file.
func read(path string, size, mtime int64) fileInfo {
	info := fileInfo{Size: size, ModTime: mtime}
	fi, err := decode.ReadInfo(path)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	info.Duration, info.Notice = fi.Duration, fi.Notice
	for _, c := range fi.Chapters {
		info.Chapters = append(info.Chapters, chapterInfo{Title: c.Title, Start: c.Start, End: c.End})
	}
	switch t := fi.Tags; {
	case errors.Is(fi.TagErr, decode.ErrNoTags):
	case fi.TagErr != nil:
		info.TagError = fi.TagErr.Error()
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
