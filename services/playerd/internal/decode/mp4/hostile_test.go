package mp4

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	m "github.com/storybox/storybox/services/playerd/internal/decode/mp4/mp4test"
)

// toneAudio is testdata/tone.aac's frames, for files made by mp4test.
func toneAudio(t testing.TB) m.Audio {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "tone.aac"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.ADTS(data)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// openBytes opens data, failing the test on a panic rather than crashing it.
func openBytes(t *testing.T, data []byte) (f *File, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("panic: %v", p)
		}
	}()
	return Open(bytes.NewReader(data), int64(len(data)))
}

// largeSizes are 64-bit box sizes that do not fit an int64, or do but
// overflow once added to an offset.
var largeSizes = []uint64{math.MaxUint64, math.MaxUint64 - 15, 1 << 63, 1<<63 + 8, math.MaxInt64, math.MaxInt64 - 7, 1 << 62}

// A 64-bit box size beyond the file, at the top or inside moov, is a
// damaged file, however it converts.
func TestLargeBoxSizes(t *testing.T) {
	a := toneAudio(t)
	ftyp := m.Box("ftyp", []byte("M4A "), m.U32(0))
	for _, size := range largeSizes {
		top := append(append(bytes.Clone(ftyp), m.LargeHeader("moov", size)...), make([]byte, 64)...)
		if _, err := openBytes(t, top); !errors.Is(err, ErrCorrupt) {
			t.Errorf("moov of %d bytes: %v", size, err)
		}
		inner := m.M4A(m.File{Audio: a, UserData: [][]byte{append(m.LargeHeader("meta", size), make([]byte, 32)...)}})
		f, err := openBytes(t, inner)
		if err != nil || f.Samples != len(a.Frames) {
			t.Errorf("udta/meta of %d bytes: %v", size, err)
		}
		inner = m.M4A(m.File{Audio: a, AudioTable: func(b map[string][]byte) {
			b["stsd"] = append(m.LargeHeader("stsd", size), b["stsd"][8:]...)
		}})
		if _, err := openBytes(t, inner); !errors.Is(err, ErrCorrupt) {
			t.Errorf("stsd of %d bytes: %v", size, err)
		}
	}
}

// Chunk offsets near the top of the int64 range must not wrap past the
// check that a sample lies in the file.
func TestChunkOffsetsWrap(t *testing.T) {
	a := toneAudio(t)
	for _, off := range []uint64{math.MaxInt64, math.MaxInt64 - 100, 1 << 63, math.MaxUint64 - 10} {
		data := m.M4A(m.File{Audio: a, FramesPerChunk: len(a.Frames), AudioTable: func(b map[string][]byte) {
			delete(b, "stco")
			b["co64"] = m.Box("co64", m.Full(0, 0, m.U32(1), m.U64(off)))
		}})
		for _, size := range []int64{int64(len(data)), math.MaxInt64} {
			f, err := Open(bytes.NewReader(data), size)
			if err != nil {
				t.Fatal(err)
			}
			c := f.Cursor()
			for i := range 3 {
				if o, n, err := c.Sample(i); !errors.Is(err, ErrCorrupt) {
					t.Errorf("chunk at %d in %d bytes: sample %d at %d+%d, %v", off, size, i, o, n, err)
				}
			}
		}
	}
}

// An edit longer than the media, by so much that scaling it to the
// media's timescale overflows, plays the whole media.
func TestEditOverflow(t *testing.T) {
	a := toneAudio(t)
	for _, dur := range []uint64{math.MaxUint64, math.MaxUint64/44100 + 1, 1 << 62} {
		elst := m.Box("elst", m.Full(1, 0, m.U32(1), m.U64(dur), m.U64(1024), m.U32(0x10000)))
		f, err := openBytes(t, m.M4A(m.File{Audio: a, Edts: m.Box("edts", elst)}))
		if err != nil {
			t.Fatal(err)
		}
		if f.Start != 1024 || f.Length != f.Duration-1024 {
			t.Errorf("edit of %d: %d+%d of %d", dur, f.Start, f.Length, f.Duration)
		}
	}
}

// countingReader counts reads and remembers the largest.
type countingReader struct {
	r       io.ReaderAt
	reads   int
	largest int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	c.largest = max(c.largest, len(p))
	return c.r.ReadAt(p, off)
}

// A file of empty boxes before its moov is refused after a bounded number
// of them, not walked to the end.
func TestManyEmptyBoxes(t *testing.T) {
	a := toneAudio(t)
	good := m.M4A(m.File{Audio: a})
	n := int(good[3]) // the ftyp box's size
	data := append(append(bytes.Clone(good[:n]), bytes.Repeat(m.Box("free"), 1<<16)...), good[n:]...)
	r := &countingReader{r: bytes.NewReader(data)}
	_, err := Open(r, int64(len(data)))
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("65536 empty boxes: %v", err)
	}
	t.Logf("%d reads", r.reads)
	if r.reads > 64+8 {
		t.Errorf("%d reads", r.reads)
	}
	// A few are a file like any other.
	data = m.M4A(m.File{Audio: a, Head: bytes.Repeat(m.Box("free"), 16)})
	if f, err := openBytes(t, data); err != nil || f.Samples != len(a.Frames) {
		t.Errorf("16 empty boxes: %v", err)
	}
}

// chapterFile is the tone with three chapters in a QuickTime chapter track,
// its sample table changed by edit.
func chapterFile(t *testing.T, edit func(map[string][]byte)) []byte {
	a := toneAudio(t)
	return m.M4A(m.File{Audio: a, ChapterTable: edit, Chapters: []m.Chapter{
		{Title: "Eins", Duration: 30 * 1024}, {Title: "Zwei", Duration: 30 * 1024}, {Title: "Drei", Duration: 28 * 1024},
	}})
}

// A damaged chapter track, or damaged Nero chapters, leave the file
// without chapters: it plays as one track.
func TestChapterErrorsGiveNoChapters(t *testing.T) {
	if f, err := openBytes(t, chapterFile(t, nil)); err != nil || len(f.Chapters) != 3 || f.Chapters[2].Title != "Drei" {
		t.Fatalf("the undamaged file: %+v, %v", f, err)
	}
	a := toneAudio(t)
	for name, data := range map[string][]byte{
		"stsz longer than its box": chapterFile(t, func(b map[string][]byte) {
			b["stsz"] = m.Box("stsz", m.Full(0, 0, m.U32(0), m.U32(100), m.U32(6)))
		}),
		"no stts": chapterFile(t, func(b map[string][]byte) { delete(b, "stts") }),
		"stsc of 0 samples a chunk": chapterFile(t, func(b map[string][]byte) {
			b["stsc"] = m.Box("stsc", m.Full(0, 0, m.U32(1), m.U32(1), m.U32(0), m.U32(1)))
		}),
		"a title beyond the file": chapterFile(t, func(b map[string][]byte) {
			b["stco"] = m.Box("stco", m.Full(0, 0, m.U32(3), m.U32(8), m.U32(1<<31), m.U32(8)))
		}),
		"a title at an offset that wraps": chapterFile(t, func(b map[string][]byte) {
			b["stco"] = nil
			b["co64"] = m.Box("co64", m.Full(0, 0, m.U32(3), m.U64(8), m.U64(math.MaxInt64-2), m.U64(8)))
		}),
		"more titles than chapters are allowed": chapterFile(t, func(b map[string][]byte) {
			b["stsz"] = m.Box("stsz", m.Full(0, 0, m.U32(6), m.U32(maxChapters+1)))
			b["stts"] = m.Box("stts", m.Full(0, 0, m.U32(1), m.U32(maxChapters+1), m.U32(1)))
			b["stsc"] = m.Box("stsc", m.Full(0, 0, m.U32(1), m.U32(1), m.U32(maxChapters+1), m.U32(1)))
			b["stco"] = m.Box("stco", m.Full(0, 0, m.U32(1), m.U32(8)))
		}),
		"a sample description of 4 bytes": chapterFile(t, func(b map[string][]byte) { b["stsd"] = m.Box("stsd", m.U32(0)) }),
		"no sample table":                 chapterFile(t, func(b map[string][]byte) { clear(b) }),
		"a second audio track, damaged": bytes.Replace(chapterFile(t, func(b map[string][]byte) {
			b["stsd"] = m.Box("stsd", m.U32(0))
		}), []byte("text"), []byte("soun"), 1),
		"chpl beyond udta": m.M4A(m.File{Audio: a, UserData: [][]byte{
			append(m.U32(200), []byte("chpl\x01\x00\x00\x00")...),
		}}),
	} {
		f, err := openBytes(t, data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(f.Chapters) != 0 || f.Samples != len(a.Frames) {
			t.Errorf("%s: %d samples, chapters %+v", name, f.Samples, f.Chapters)
		}
	}
}

// Titles that are not what they claim give numbered chapters; Nero
// chapters that run off their box give those that were whole.
func TestChapterTitles(t *testing.T) {
	data := chapterFile(t, func(b map[string][]byte) {
		// Sample sizes of 1, 2 and 4097 bytes: too short for a length,
		// too short for the text, more than a title.
		b["stsz"] = m.Box("stsz", m.Full(0, 0, m.U32(0), m.U32(3), m.U32(1), m.U32(2), m.U32(4097)))
		copy(b["stco"][16+8:], m.U32(8)) // the third at the file's start
	})
	f, err := openBytes(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Chapters) != 3 || f.Chapters[0].Title != "Chapter 1" || f.Chapters[1].Title != "Chapter 2" || f.Chapters[2].Title != "Chapter 3" {
		t.Errorf("chapters %+v", f.Chapters)
	}
	chpl := m.Chpl([]string{"Eins", "Zwei"}, []uint64{0, 10_000_000})
	chpl = append(chpl[:len(chpl)-3], 0) // the second title cut short
	chpl[3] = byte(len(chpl))
	f, err = openBytes(t, m.M4A(m.File{Audio: toneAudio(t), UserData: [][]byte{chpl}}))
	if err != nil || len(f.Chapters) != 1 || f.Chapters[0].Title != "Eins" {
		t.Errorf("cut Nero chapters: %+v, %v", f, err)
	}
}

// zeroTail is a file of size bytes that holds data and then zeros: a file
// whose boxes claim gigabytes, without a test having to hold them.
type zeroTail struct {
	data []byte
	size int64
}

func (z zeroTail) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= z.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), z.size-off))
	clear(p[:n])
	if off < int64(len(z.data)) {
		copy(p[:n], z.data[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// The cover is read into memory only up to maxCover (16 MB); a larger one,
// real or claimed, is left out and the file plays with its other tags.
func TestCoverLimit(t *testing.T) {
	a := toneAudio(t)
	png := []byte("\x89PNG\r\n\x1a\n")
	small := m.M4A(m.File{Audio: a, UserData: [][]byte{m.Meta(m.Item("\xa9nam", 1, []byte("Buch")), m.Item("covr", 14, png))}})
	if f, err := openBytes(t, small); err != nil || string(f.Tags.Cover) != string(png) || f.Tags.CoverMIME != "image/png" {
		t.Fatalf("a small cover: %v", err)
	}
	big := append(bytes.Clone(png), make([]byte, maxCover-len(png)+1)...)
	data := m.M4A(m.File{Audio: a, UserData: [][]byte{m.Meta(m.Item("\xa9nam", 1, []byte("Buch")), m.Item("covr", 14, big))}})
	r := &countingReader{r: bytes.NewReader(data)}
	f, err := Open(r, int64(len(data)))
	if err != nil || f.Tags.Cover != nil || f.Tags.Title != "Buch" || f.Samples != len(a.Frames) {
		t.Errorf("a cover of %d bytes: %+v, %v", len(big), f, err)
	}
	if r.largest > maxSmallBox {
		t.Errorf("read %d bytes at once", r.largest)
	}
	// A cover claiming 3.5 GB in a file that has them: moov, udta, meta,
	// ilst, covr and data end together, and all grow.
	data = m.M4A(m.File{Audio: a, UserData: [][]byte{m.Meta(m.Item("covr", 13, []byte{0xff, 0xd8}))}})
	end := bytes.Index(data, []byte("mdat")) - 4
	const grow = 3_500_000_000
	for _, typ := range []string{"moov", "udta", "meta", "ilst", "covr", "data"} {
		i := bytes.LastIndex(data[:end], []byte(typ)) - 4
		copy(data[i:], m.U32(binary.BigEndian.Uint32(data[i:])+grow))
	}
	r = &countingReader{r: zeroTail{data[:end], int64(end) + grow}}
	f, err = Open(r, int64(end)+grow)
	if err != nil || f.Tags.Cover != nil || f.Samples != len(a.Frames) {
		t.Errorf("a cover claiming %d bytes: %+v, %v", grow, f, err)
	}
	if r.largest > maxSmallBox {
		t.Errorf("read %d bytes at once", r.largest)
	}
}

// A jump into a chunk of 2^32-1 samples of 2^32-1 bytes each is one step
// that does not wrap: the sample is beyond the file.
func TestFixedSizeJumpOverflow(t *testing.T) {
	a := toneAudio(t)
	const n = math.MaxUint32
	data := m.M4A(m.File{Audio: a, AudioTable: func(b map[string][]byte) {
		b["stsz"] = m.Box("stsz", m.Full(0, 0, m.U32(n), m.U32(n)))
		b["stts"] = m.Box("stts", m.Full(0, 0, m.U32(1), m.U32(n), m.U32(1024)))
		b["stsc"] = m.Box("stsc", m.Full(0, 0, m.U32(1), m.U32(1), m.U32(n), m.U32(1)))
		b["stco"] = m.Box("stco", m.Full(0, 0, m.U32(1), m.U32(8)))
	}})
	f, err := openBytes(t, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{n - 1, n / 2, 1 << 31, 3} {
		if off, size, err := f.Cursor().Sample(i); !errors.Is(err, ErrCorrupt) {
			t.Errorf("sample %d at %d+%d: %v", i, off, size, err)
		}
	}
}
