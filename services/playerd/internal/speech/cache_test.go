package speech

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

func key(s string) string { return Key("test", Request{Text: s}) }

func TestCachePutGetAndReopen(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCache(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(key("a")); ok {
		t.Fatal("hit in an empty cache")
	}
	wav := testWAV(16000, 1000)
	if err := c.Put(key("a"), wav); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get(key("a")); !ok || !bytes.Equal(got, wav) {
		t.Fatal("entry not returned intact")
	}
	// A restart finds the entry again.
	c2, err := OpenCache(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := c2.Get(key("a")); !ok || !bytes.Equal(got, wav) {
		t.Fatal("entry lost across reopen")
	}
	if _, n := c2.Size(); n != 1 {
		t.Errorf("%d entries after reopen, want 1", n)
	}
	if _, ok := c2.Get("../../etc/passwd"); ok {
		t.Error("invalid key served")
	}
	if err := c2.Put("nothex", wav); err == nil {
		t.Error("invalid key stored")
	}
}

func TestCacheCorruptEntryIsAMiss(t *testing.T) {
	dir := t.TempDir()
	c, _ := OpenCache(dir, 1<<20)
	wav := testWAV(16000, 1000)
	for _, k := range []string{key("flip"), key("cut")} {
		if err := c.Put(k, wav); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, key("flip")+cacheExt)
	b, _ := os.ReadFile(p)
	b[len(b)-10] ^= 0x40
	os.WriteFile(p, b, 0o644)
	p2 := filepath.Join(dir, key("cut")+cacheExt)
	os.Truncate(p2, 100)

	for _, k := range []string{key("flip"), key("cut")} {
		if _, ok := c.Get(k); ok {
			t.Errorf("corrupt entry %s served", k[:8])
		}
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Error("corrupt entry not removed")
	}
	if total, n := c.Size(); n != 0 || total != 0 {
		t.Errorf("size %d/%d after removing both entries", total, n)
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	dir := t.TempDir()
	wav := testWAV(16000, 1000) // ~2 KB; 3 entries fit, 4 do not
	entry := int64(len(cacheMagic) + 32 + len(wav))
	c, _ := OpenCache(dir, 3*entry+10)
	clock := time.Unix(1_700_000_000, 0)
	c.now = func() time.Time { clock = clock.Add(time.Second); return clock }

	for _, s := range []string{"a", "b", "c"} {
		if err := c.Put(key(s), wav); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := c.Get(key("a")); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.Put(key("d"), wav)
	if _, ok := c.Get(key("b")); ok {
		t.Error("b, least recently used, was kept")
	}
	for _, s := range []string{"a", "c", "d"} {
		if _, ok := c.Get(key(s)); !ok {
			t.Errorf("%s evicted", s)
		}
	}
	if total, n := c.Size(); n != 3 || total != 3*entry {
		t.Errorf("size %d bytes / %d entries, want %d / 3", total, n, 3*entry)
	}
	// The order survives a restart (file times), and a smaller limit at
	// open evicts the oldest first. Get order above: a, c, d.
	c2, _ := OpenCache(dir, entry+10)
	if _, ok := c2.Get(key("d")); !ok {
		t.Error("most recent entry evicted at open")
	}
	if _, n := c2.Size(); n != 1 {
		t.Errorf("%d entries, want 1", n)
	}
	// Larger than the whole cache: not stored, not an error.
	if err := c2.Put(key("huge"), make([]byte, entry*2)); err != nil {
		t.Fatal(err)
	}
	if _, ok := c2.Get(key("huge")); ok {
		t.Error("entry larger than the cache stored")
	}
}

func TestCacheRemovesInterruptedWrites(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "."+key("y")+cacheExt+".tmp-123")
	os.WriteFile(tmp, []byte("half"), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("not ours"), 0o644)
	c, err := OpenCache(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Error("interrupted write left behind")
	}
	if _, err := os.Stat(filepath.Join(dir, "README")); err != nil {
		t.Error("foreign file removed")
	}
	c.Put(key("x"), []byte("wav"))
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if state.IsTemp(de.Name()) {
			t.Errorf("temp file %s left after Put", de.Name())
		}
	}
	if _, err := OpenCache(dir, 0); err == nil {
		t.Error("zero size limit accepted")
	}
}
