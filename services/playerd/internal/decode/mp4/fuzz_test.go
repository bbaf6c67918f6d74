package mp4

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	m "github.com/storybox/storybox/services/playerd/internal/decode/mp4/mp4test"
)

// FuzzBoxes opens mutated MP4 files (real ones and mp4test's, with a
// chapter track and a cover) and walks their samples: an error is a
// correct answer; a panic, an allocation beyond the limits, or a File that
// breaks its promises (problems, samples) is a bug. Open is called
// directly, outside the decode boundary's recover, so a panic fails.
func FuzzBoxes(f *testing.F) {
	for _, name := range []string{"seed/tone.m4b", "tone.m4a"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	a := toneAudio(f)
	a.Frames = a.Frames[:24] // small seeds mutate faster
	f.Add(m.M4A(m.File{Audio: a, Interleave: true, FramesPerChunk: 5,
		Chapters: []m.Chapter{{Title: "Eins", Duration: 8 * 1024}, {Title: "Zwei", Duration: 16 * 1024}},
		UserData: [][]byte{m.Meta(m.Item("\xa9nam", 1, []byte("Buch")), m.Item("covr", 14, []byte("\x89PNG")))},
		Edts:     m.Box("edts", m.Box("elst", m.Full(0, 0, m.U32(1), m.U32(20*1024), m.U32(1024), m.U32(0x10000)))),
	}))
	f.Add(m.M4A(m.File{Audio: a, UserData: [][]byte{m.Chpl([]string{"A", "B"}, []uint64{0, 5_000_000})}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		// An input that keeps the reader busy ends the worker, which
		// makes the fuzzer keep it.
		timer := time.AfterFunc(10*time.Second, func() { panic("mp4: an input kept the reader busy for 10 s") })
		defer timer.Stop()
		file, err := Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, p := range problems(file) {
			t.Error(p)
		}
		for _, p := range samples(file.Cursor, file.Samples, int64(len(data))) {
			t.Error(p)
		}
	})
}

// problems lists the promises an opened File breaks.
func problems(f *File) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if f.Timescale == 0 || len(f.Config) < 2 || f.Samples < 0 {
		bad("timescale %d, config %x, %d samples", f.Timescale, f.Config, f.Samples)
	}
	if f.Start > f.Duration || f.Length > f.Duration-f.Start {
		bad("edit %d+%d of %d", f.Start, f.Length, f.Duration)
	}
	total := f.Seconds()
	if math.IsNaN(total) || math.IsInf(total, 0) || total < 0 {
		bad("%v s", total)
	}
	if len(f.Tags.Cover) > maxCover {
		bad("cover of %d bytes", len(f.Tags.Cover))
	}
	if len(f.Chapters) > maxChapters {
		bad("%d chapters", len(f.Chapters))
	}
	prev := 0.0
	for i, c := range f.Chapters {
		if !(c.Start >= prev && c.End > c.Start && c.End <= total) || c.Title == "" {
			bad("chapter %d %+v after %v, of %v s", i, c, prev, total)
		}
		prev = c.End
	}
	return out
}

// maxWalk bounds the samples walked for one input.
const maxWalk = 1 << 14

// samples walks the samples in order, and each sample again from a fresh
// cursor (a jump), listing a sample that is found outside the file or not
// where reading in order found it.
func samples(cursor func() *Cursor, n int, size int64) []string {
	var out []string
	c := cursor()
	for i := range min(n, maxWalk) {
		off, k, err := c.Sample(i)
		if err != nil {
			break
		}
		if off < 0 || k < 0 || off > size || int64(k) > size-off {
			out = append(out, fmt.Sprintf("sample %d at %d+%d in %d bytes", i, off, k, size))
		}
		if i%97 == 0 {
			off2, k2, err := cursor().Sample(i)
			if err != nil || off2 != off || k2 != k {
				out = append(out, fmt.Sprintf("sample %d at %d+%d in order, %d+%d (%v) after a jump", i, off, k, off2, k2, err))
			}
		}
	}
	return out
}

// Each of the fuzz target's checks catches what it is there for.
func TestFuzzChecksFail(t *testing.T) {
	good := func() *File {
		return &File{Config: []byte{0x12, 0x10}, Timescale: 44100, Samples: 10, Duration: 10240, Start: 1024, Length: 8000,
			Chapters: []Chapter{{"A", 0, 0.1}, {"B", 0.1, 0.18}}}
	}
	if p := problems(good()); len(p) != 0 {
		t.Fatalf("a good file: %v", p)
	}
	for name, damage := range map[string]func(f *File){
		"timescale 0":            func(f *File) { f.Timescale = 1; f.Timescale-- },
		"no config":              func(f *File) { f.Config = nil },
		"start after the end":    func(f *File) { f.Start = 20000 },
		"length past the end":    func(f *File) { f.Length = 9300 },
		"a huge cover":           func(f *File) { f.Tags.Cover = make([]byte, maxCover+1) },
		"too many chapters":      func(f *File) { f.Chapters = make([]Chapter, maxChapters+1) },
		"chapters out of order":  func(f *File) { f.Chapters[0], f.Chapters[1] = f.Chapters[1], f.Chapters[0] },
		"a chapter past the end": func(f *File) { f.Chapters[1].End = 0.5 },
		"an empty chapter":       func(f *File) { f.Chapters[1].End = f.Chapters[1].Start },
		"a chapter at NaN":       func(f *File) { f.Chapters[0].Start = math.NaN() },
		"a chapter before 0":     func(f *File) { f.Chapters[0].Start = -1 },
		"an untitled chapter":    func(f *File) { f.Chapters[0].Title = "" },
	} {
		f := good()
		damage(f)
		if p := problems(f); len(p) == 0 {
			t.Errorf("%s: no problem found", name)
		}
	}
	// Samples: a cursor over a real file, then over a table that puts a
	// sample past the file's end, and one whose jumps land elsewhere.
	data := m.M4A(m.File{Audio: toneAudio(t)})
	f, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if p := samples(f.Cursor, f.Samples, int64(len(data))); len(p) != 0 {
		t.Fatalf("a good file: %v", p)
	}
	if p := samples(f.Cursor, f.Samples, int64(len(data))-1); len(p) == 0 {
		t.Error("a sample past the end: no problem found")
	}
	calls := 0
	jumpy := func() *Cursor {
		calls++
		c := f.Cursor()
		if calls > 1 {
			c.st = &sampleTable{}
			*c.st = f.table
			c.st.fixed = 7
		}
		return c
	}
	if p := samples(jumpy, f.Samples, int64(len(data))); len(p) == 0 {
		t.Error("a jump elsewhere: no problem found")
	}
}
