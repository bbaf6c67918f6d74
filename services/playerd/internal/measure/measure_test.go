package measure

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/loudness"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// writeTone writes a stereo 1 kHz tone of seconds at peak dBFS: its
// loudness is dBFS LUFS (BS.1770's calibration).
func writeTone(t *testing.T, path string, seconds, dBFS float64) {
	t.Helper()
	const rate = 22050
	a := 32767 * math.Pow(10, dBFS/20)
	frames := make([][2]int16, int(seconds*rate))
	for i := range frames {
		v := int16(a * math.Sin(2*math.Pi*1000*float64(i)/rate))
		frames[i] = [2]int16{v, v}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, testmedia.WAV(rate, frames), 0o644); err != nil {
		t.Fatal(err)
	}
}

// box is a library, a store and a running worker over a media directory.
type box struct {
	media, data string
	lib         *library.Library
	store       *Store
	stop        func()
}

func start(t *testing.T, media, data string) *box {
	t.Helper()
	lib := library.New(media, filepath.Join(data, "library-cache.json"), nil)
	if _, err := lib.Scan(); err != nil {
		t.Fatal(err)
	}
	store := Open(filepath.Join(data, "loudness.json"))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		New(Config{Library: lib, Store: store, OnError: func(err error) { t.Error(err) }}).Run(ctx)
	})
	b := &box{media: media, data: data, lib: lib, store: store, stop: func() { cancel(); wg.Wait() }}
	t.Cleanup(b.stop)
	return b
}

// settled waits until every file of the library at its size total is
// measured or failed, by the store's own progress signal.
func (b *box) settled(t *testing.T, total int) Progress {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		changed := b.store.Changed()
		p := b.store.Progress()
		if p.Total == total && p.Measured+p.Failed == total && !p.Measuring {
			return p
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("not settled: %+v, want %d files", p, total)
		}
	}
}

func folderID(t *testing.T, lib *library.Library, rel string) string {
	t.Helper()
	for _, f := range lib.Folders() {
		if f.Relative == rel {
			return f.ID
		}
	}
	t.Fatalf("no folder %s", rel)
	return ""
}

// TestMeasuresTheLibrary: after the scan every track is measured, its
// result is what measuring the file directly gives, and a folder's result
// is gated over its tracks' blocks; a file that cannot be decoded is
// counted as failed, not retried.
func TestMeasuresTheLibrary(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	loud := filepath.Join(media, "Album", "01 loud.wav")
	quiet := filepath.Join(media, "Album", "02 quiet.wav")
	writeTone(t, loud, 6, -10)
	writeTone(t, quiet, 3, -30)
	writeTone(t, filepath.Join(media, "Play", "1.wav"), 2, -20)
	if err := os.WriteFile(filepath.Join(media, "Play", "2.mp3"), []byte("ID3 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := start(t, media, data)
	p := b.settled(t, 3)
	if p.Measured != 3 {
		t.Fatalf("progress %+v", p)
	}
	r, ok := b.store.Track(loud)
	if !ok || math.Abs(r.Integrated+10) > 0.1 {
		t.Fatalf("loud track: %+v, %v", r.Integrated, ok)
	}
	s, format, err := decode.Open(loud)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := loudness.Measure(s, format, nil)
	s.Close()
	if err != nil || direct.Integrated != r.Integrated || direct.TruePeak != r.TruePeak {
		t.Errorf("stored %+v, measured directly %+v (%v)", r, direct, err)
	}
	q, _ := b.store.Track(quiet)
	f, ok := b.store.Folder(folderID(t, b.lib, "Album"))
	want := loudness.Combine(r, q)
	if !ok || f.Integrated != want.Integrated || f.Integrated < -11 {
		t.Errorf("folder %.2f LUFS (%v), want %.2f, near the loud track's −10", f.Integrated, ok, want.Integrated)
	}
	if _, ok := b.store.Folder(folderID(t, b.lib, "Play")); !ok {
		t.Error("a folder whose only other file is unplayable has no result")
	}
}

// TestRenameAndRestartMeasureNothing: results survive a restart, and a
// folder renamed and rescanned is not measured again (content keys).
func TestRenameAndRestartMeasureNothing(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	writeTone(t, filepath.Join(media, "A", "1.wav"), 2, -20)
	writeTone(t, filepath.Join(media, "A", "2.wav"), 2, -25)
	b := start(t, media, data)
	b.settled(t, 2)
	b.stop()

	if err := os.Rename(filepath.Join(media, "A"), filepath.Join(media, "B")); err != nil {
		t.Fatal(err)
	}
	b = start(t, media, data)
	if p := b.settled(t, 2); p.Measured != 2 {
		t.Fatalf("after a restart and a rename: %+v", p)
	}
	if n := b.store.puts.Load(); n != 0 {
		t.Errorf("after a restart and a rename, %d files measured again", n)
	}
	store := b.store
	if _, ok := store.Track(filepath.Join(media, "B", "1.wav")); !ok {
		t.Error("renamed track has no result")
	}
}

// TestUploadIsMeasured: a file added and rescanned (as an upload is) is
// measured while the worker runs on.
func TestUploadIsMeasured(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	writeTone(t, filepath.Join(media, "A", "1.wav"), 2, -20)
	b := start(t, media, data)
	b.settled(t, 1)
	added := filepath.Join(media, "A", "2.wav")
	writeTone(t, added, 2, -14)
	if _, err := b.lib.Scan(); err != nil {
		t.Fatal(err)
	}
	b.settled(t, 2)
	if r, ok := b.store.Track(added); !ok || math.Abs(r.Integrated+14) > 0.1 {
		t.Errorf("upload: %+v, %v", r.Integrated, ok)
	}
	// Changed content under the same name is measured again.
	writeTone(t, added, 3, -24)
	if _, err := b.lib.Scan(); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	for {
		changed := b.store.Changed()
		if r, ok := b.store.Track(added); ok && math.Abs(r.Integrated+24) < 0.1 {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("changed file not measured again")
		}
	}
}

// TestDamagedResultsStartEmpty: an unreadable results file costs measuring
// again, nothing else.
func TestDamagedResultsStartEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loudness.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"tracks":{"k":{"blocks":"!!"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := Open(path); len(s.tracks) != 0 {
		t.Errorf("damaged file read as %d results", len(s.tracks))
	}
}

// TestPause is the pacing policy: hold off after a start, a duty share
// while playing, full speed when idle.
func TestPause(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	if d := pause(now, 10*time.Millisecond, false, now.Add(-time.Second)); d != holdOff-time.Second {
		t.Errorf("a second after a start: %v", d)
	}
	if d := pause(now, 10*time.Millisecond, true, now.Add(-time.Minute)); d != 40*time.Millisecond {
		t.Errorf("playing: %v", d)
	}
	if d := pause(now, 10*time.Millisecond, false, now.Add(-time.Minute)); d != 0 {
		t.Errorf("idle: %v", d)
	}
}
