package mp4

import (
	"bytes"
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
