package speech

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Cache keeps rendered speech on disk (under -data), bounded in size, least
// recently used entries evicted first. Entries are written atomically and
// carry a checksum, so a file damaged by a power cut is detected on reading,
// removed and rendered again. The access order survives restarts through the
// files' modification times, which a hit refreshes.
type Cache struct {
	dir      string
	maxBytes int64

	mu      sync.Mutex
	entries map[string]*cacheEntry
	total   int64
	now     func() time.Time
}

type cacheEntry struct {
	size int64
	used time.Time
}

// Entry file: magic, SHA-256 of the payload, payload (a WAV file).
var cacheMagic = []byte("storybox-speech-cache-1\n")

const (
	cacheExt = ".speech"
)

// OpenCache opens (creating) a cache directory holding at most maxBytes.
func OpenCache(dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("speech cache: size limit must be positive, got %d", maxBytes)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("speech cache: %w", err)
	}
	c := &Cache{dir: dir, maxBytes: maxBytes, entries: map[string]*cacheEntry{}, now: time.Now}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("speech cache: %w", err)
	}
	for _, de := range des {
		name := de.Name()
		if state.IsTemp(name) {
			// A write that a crash interrupted; it was never renamed
			// into place, so nothing refers to it.
			os.Remove(filepath.Join(dir, name))
			continue
		}
		key, ok := strings.CutSuffix(name, cacheExt)
		if !ok || !de.Type().IsRegular() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		c.entries[key] = &cacheEntry{size: info.Size(), used: info.ModTime()}
		c.total += info.Size()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evictLocked("")
	return c, nil
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key+cacheExt) }

// Get returns the stored WAV for key. ok is false on a miss; a corrupt entry
// counts as a miss and is deleted.
func (c *Cache) Get(key string) (wav []byte, ok bool) {
	if !validKey(key) {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		return nil, false
	}
	b, err := os.ReadFile(c.path(key))
	payload, good := unwrapEntry(b)
	if err != nil || !good {
		c.removeLocked(key)
		return nil, false
	}
	e.used = c.now()
	// Best effort: a lost mtime only makes the entry look older.
	os.Chtimes(c.path(key), e.used, e.used)
	return payload, true
}

// Put stores wav under key, evicting least recently used entries as needed.
// An entry larger than the whole cache is not stored.
func (c *Cache) Put(key string, wav []byte) error {
	if !validKey(key) {
		return fmt.Errorf("speech cache: invalid key %q", key)
	}
	sum := sha256.Sum256(wav)
	var buf bytes.Buffer
	buf.Grow(len(cacheMagic) + len(sum) + len(wav))
	buf.Write(cacheMagic)
	buf.Write(sum[:])
	buf.Write(wav)
	size := int64(buf.Len())
	if size > c.maxBytes {
		return nil
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if err := state.WriteFile(c.path(key), buf.Bytes()); err != nil {
		return fmt.Errorf("speech cache: %w", err)
	}
	if old := c.entries[key]; old != nil {
		c.total -= old.size
	}
	c.entries[key] = &cacheEntry{size: size, used: c.now()}
	c.total += size
	c.evictLocked(key)
	return nil
}

// Size reports the bytes held and the number of entries.
func (c *Cache) Size() (bytes int64, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, len(c.entries)
}

func (c *Cache) evictLocked(keep string) {
	if c.total <= c.maxBytes {
		return
	}
	keys := make([]string, 0, len(c.entries))
	for k := range c.entries {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return c.entries[keys[i]].used.Before(c.entries[keys[j]].used) })
	for _, k := range keys {
		if c.total <= c.maxBytes {
			break
		}
		if k != keep {
			c.removeLocked(k)
		}
	}
}

func (c *Cache) removeLocked(key string) {
	if e := c.entries[key]; e != nil {
		c.total -= e.size
		delete(c.entries, key)
	}
	if err := os.Remove(c.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Keep counting it: the space is still used.
		if info, err := os.Stat(c.path(key)); err == nil {
			c.entries[key] = &cacheEntry{size: info.Size(), used: info.ModTime()}
			c.total += info.Size()
		}
	}
}

func unwrapEntry(b []byte) ([]byte, bool) {
	head := len(cacheMagic) + sha256.Size
	if len(b) < head || !bytes.Equal(b[:len(cacheMagic)], cacheMagic) {
		return nil, false
	}
	payload := b[head:]
	sum := sha256.Sum256(payload)
	return payload, bytes.Equal(sum[:], b[len(cacheMagic):head])
}

func validKey(key string) bool {
	if len(key) != 2*sha256.Size {
		return false
	}
	for _, r := range key {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
