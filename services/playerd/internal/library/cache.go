package library

import (
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// fileInfo is what a scan learns about one audio file.
type fileInfo struct {
	Size     int64   `json:"size"`
	ModTime  int64   `json:"mtime"`
	Title    string  `json:"title,omitempty"`
	Artist   string  `json:"artist,omitempty"`
	Album    string  `json:"album,omitempty"`
	Duration float64 `json:"duration"`
	Picture  bool    `json:"picture,omitempty"`
	// Error: the file cannot be played and is left out; TagError: it plays
	// but its tags could not be read. Both are kept so an unchanged bad file
	// is not read again at every scan.
	Error    string `json:"error,omitempty"`
	TagError string `json:"tag_error,omitempty"`
	// Notice: the file plays, with less than it holds (HE-AAC's core);
	// the scan reports it as a problem of the file.
	Notice string `json:"notice,omitempty"`
	// Chapters of an audiobook (M4B): the folder lists each as a track.
	Chapters []chapterInfo `json:"chapters,omitempty"`
}

type chapterInfo struct {
	Title string  `json:"title"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// cacheVersion 2: version 1 listed files whose decoder failed, without the
// error.
const cacheVersion = 2

// cache remembers fileInfo by relative path, so a restart or rescan of an
// unchanged library reads no audio file.
type cache struct {
	Version int                 `json:"version"`
	Files   map[string]fileInfo `json:"files"`
}

// loadCache reads the cache; a missing or unreadable one starts empty, it is
// only an optimisation.
func loadCache(path string) *cache {
	c := &cache{Version: cacheVersion, Files: map[string]fileInfo{}}
	if path == "" {
		return c
	}
	var disk cache
	if err := state.ReadJSON(path, &disk); err == nil && disk.Version == cacheVersion && disk.Files != nil {
		c.Files = disk.Files
	}
	return c
}

func (c *cache) get(rel string, size, mtime int64) (fileInfo, bool) {
	fi, ok := c.Files[rel]
	return fi, ok && fi.Size == size && fi.ModTime == mtime
}

func (c *cache) put(rel string, fi fileInfo) { c.Files[rel] = fi }

// prune forgets files that were not seen and reports how many.
func (c *cache) prune(seen map[string]bool) int {
	n := 0
	for rel := range c.Files {
		if !seen[rel] {
			delete(c.Files, rel)
			n++
		}
	}
	return n
}

func (c *cache) save(path string) error { return state.WriteJSON(path, c) }
