package decode

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/decode/aac/aactest"
	m "github.com/storybox/storybox/services/playerd/internal/decode/mp4/mp4test"
)

// The live M4A reader against crafted streams: 64-bit sizes, endless empty
// boxes, a cover in the index, and a QuickTime chapter track.

func toneM4A(t testing.TB) m.Audio {
	a, err := m.ADTS(fixture(t, "tone.aac"))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// countingStream delivers bytes in order, as the network does, and counts
// them.
type countingStream struct {
	r    io.Reader
	read int
}

func (c *countingStream) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

// openLiveM4A opens data as a podcast episode; a panic, even a contained
// one, fails the test.
func openLiveM4A(t *testing.T, data []byte) (*Live, *countingStream, error) {
	t.Helper()
	s := &countingStream{r: bytes.NewReader(data)}
	l, err := OpenLive(s, "audio/mp4")
	if p := (*PanicError)(nil); errors.As(err, &p) {
		t.Fatalf("panic: %v", err)
	}
	return l, s, err
}

// A 64-bit box size is a damaged stream, whether it converts to a negative
// int64 or overflows once added to the position.
func TestLiveM4ALargeSize(t *testing.T) {
	a := toneM4A(t)
	good := m.M4A(m.File{Audio: a})
	ftyp := good[:good[3]]
	for _, size := range []uint64{math.MaxUint64, math.MaxUint64 - 15, 1 << 63, math.MaxInt64, math.MaxInt64 - 20, liveEnd + 1, liveEnd - 20, 1 << 62} {
		for _, typ := range []string{"moov", "free", "ftyp"} {
			data := append(append(bytes.Clone(ftyp), m.LargeHeader(typ, size)...), good[len(ftyp):]...)
			_, _, err := openLiveM4A(t, data)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s of %d bytes: %v", typ, size, err)
			}
			// Beyond where a stream is taken to end, refused for its
			// size, not read on.
			if size > liveEnd && (err == nil || !strings.Contains(err.Error(), "MP4 box \""+typ)) {
				t.Errorf("%s of %d bytes: %v", typ, size, err)
			}
		}
	}
}

// A stream of empty boxes is refused after a bounded number of them.
func TestLiveM4AEmptyBoxes(t *testing.T) {
	a := toneM4A(t)
	good := m.M4A(m.File{Audio: a})
	n := int(good[3])
	data := append(append(bytes.Clone(good[:n]), bytes.Repeat(m.Box("free"), 1<<16)...), good[n:]...)
	s := &countingStream{r: bytes.NewReader(data)}
	live, err := openAACLive(bufio.NewReaderSize(s, liveBuffer), true)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("65536 empty boxes: %v", err)
	}
	if live.boxes > liveMaxBoxes+1 {
		t.Errorf("visited %d boxes", live.boxes)
	}
	// What was read before giving up: the boxes visited and a buffer.
	if boxes := (s.read - n - liveBuffer) / 8; boxes > liveMaxBoxes {
		t.Errorf("read about %d boxes", boxes)
	}
	data = m.M4A(m.File{Audio: a, Head: bytes.Repeat(m.Box("free"), 16)})
	l, _, err := openLiveM4A(t, data)
	if err != nil {
		t.Fatalf("16 empty boxes: %v", err)
	}
	if got := readAll(t, l); len(got) < 80000 {
		t.Errorf("%d samples", len(got))
	}
}

// A cover in a streamed episode's index is not kept: the stream shows no
// cover, and the index of a few kilobytes is all it holds.
func TestLiveM4ACoverNotKept(t *testing.T) {
	a := toneM4A(t)
	cover := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 4<<20)...)
	data := m.M4A(m.File{Audio: a, UserData: [][]byte{m.Meta(m.Item("\xa9nam", 1, []byte("Folge 1")), m.Item("covr", 14, cover))}})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l, _, err := openLiveM4A(t, data)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if kept := l.aac.kept; kept > 64<<10 {
		t.Errorf("kept %d bytes of the index", kept)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("opening took %d bytes", n)
	}
	if got := readAll(t, l); len(got) < 80000 {
		t.Errorf("%d samples", len(got))
	}
}

// An episode with a QuickTime chapter track (and no Nero chapters) plays
// from a file and streamed: the reader takes the audio track and steps over
// the chapter titles between its samples.
func TestM4AChapterTrackStreams(t *testing.T) {
	a := toneM4A(t)
	dir := t.TempDir()
	chapters := []m.Chapter{{Title: "Anfang", Duration: 30 * 1024}, {Title: "Mitte", Duration: 30 * 1024}, {Title: "Ende", Duration: 28 * 1024}}
	files := map[string][]byte{
		"after":       m.M4A(m.File{Audio: a, Chapters: chapters}),
		"interleaved": m.M4A(m.File{Audio: a, Chapters: chapters, Interleave: true, FramesPerChunk: 7}),
	}
	ff := aactest.FFmpeg(t)
	meta := filepath.Join(dir, "meta.txt")
	if err := os.WriteFile(meta, []byte(";FFMETADATA1\ntitle=Folge 1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1000\ntitle=Anfang\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1000\nEND=2000\ntitle=Ende\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ffmpeg.m4a")
	aactest.Run(t, ff, "-i", filepath.Join("testdata", "tone.aac"), "-i", meta, "-map", "0:a", "-map_metadata", "1", "-map_chapters", "1",
		"-c", "copy", "-movflags", "+faststart+disable_chpl", out)
	files["ffmpeg"] = readFile(t, out)
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			if bytes.Contains(data, []byte("chpl")) || !bytes.Contains(data, []byte("chap")) {
				t.Fatal("not a file with only a QuickTime chapter track")
			}
			path := filepath.Join(dir, name+".m4a")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			info, err := ReadInfo(path)
			if err != nil || len(info.Chapters) < 2 || info.Chapters[0].Title != "Anfang" {
				t.Fatalf("chapters %+v, %v", info.Chapters, err)
			}
			file, _, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			want := readAll(t, file)
			l, _, err := openLiveM4A(t, data)
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, l)
			if len(got) != len(want) || math.Abs(got[7000][0]-want[7000][0]) > 1e-6 {
				t.Errorf("streamed %d samples, file %d", len(got), len(want))
			}
		})
	}
}

// BenchmarkLiveM4AEmptyBoxes opens a stream of 65,536 empty boxes before
// its index: refused after liveMaxBoxes of them (it took 8 s, walking all
// of them twice, before the bound).
func BenchmarkLiveM4AEmptyBoxes(b *testing.B) {
	good := m.M4A(m.File{Audio: toneM4A(b)})
	n := int(good[3])
	data := append(append(bytes.Clone(good[:n]), bytes.Repeat(m.Box("free"), 1<<16)...), good[n:]...)
	for b.Loop() {
		if _, err := OpenLive(stream{bytes.NewReader(data)}, "audio/mp4"); err == nil {
			b.Fatal("opened")
		}
	}
}

// A file whose sample durations add up to more than its timescale times
// the output rate can hold (2^20 samples of 2^32-1 each) lasts what its
// frames decode to, in the library and streamed.
func TestM4ASpanOverflow(t *testing.T) {
	a := toneM4A(t)
	const n = 1 << 20
	data := m.M4A(m.File{Audio: a, AudioTable: func(b map[string][]byte) {
		b["stsz"] = m.Box("stsz", m.Full(0, 0, m.U32(200), m.U32(n)))
		b["stts"] = m.Box("stts", m.Full(0, 0, m.U32(1), m.U32(n), m.U32(math.MaxUint32)))
		b["stsc"] = m.Box("stsc", m.Full(0, 0, m.U32(1), m.U32(1), m.U32(n), m.U32(1)))
	}})
	path := filepath.Join(t.TempDir(), "long.m4a")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := ReadInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	if most := float64(n*1024) / 44100; !(info.Duration > 0 && info.Duration <= most) {
		t.Errorf("duration %v s, at most %v", info.Duration, most)
	}
	l, _, err := openLiveM4A(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if l.aac.left > n*1024 {
		t.Errorf("plays %d samples", l.aac.left)
	}
}
