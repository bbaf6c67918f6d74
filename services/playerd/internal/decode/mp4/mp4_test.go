package mp4

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/decode/aac/aactest"
)

const chapters = `;FFMETADATA1
title=Das Buch
artist=Erzählerin
album=Hörbuch

[CHAPTER]
TIMEBASE=1/1000
START=0
END=2000
title=Kapitel 1

[CHAPTER]
TIMEBASE=1/1000
START=2000
END=4500
title=Kapitel 2

[CHAPTER]
TIMEBASE=1/1000
START=4500
END=6000
title=Kapitel 3
`

// makeBook has ffmpeg write a 6 s audiobook with tags and three chapters,
// which it stores twice: as Nero chapters and as a QuickTime chapter track.
func makeBook(t *testing.T) string {
	dir := t.TempDir()
	meta := filepath.Join(dir, "meta.txt")
	if err := os.WriteFile(meta, []byte(chapters), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "book.m4b")
	aactest.Run(t, aactest.FFmpeg(t), "-f", "lavfi", "-i", "sine=f=440:r=44100:d=6", "-i", meta,
		"-map_metadata", "1", "-map_chapters", "1", "-c:a", "aac", "-b:a", "64k", out)
	return out
}

func openFile(t *testing.T, path string) *File {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBook(t *testing.T) {
	f := openFile(t, makeBook(t))
	if f.Tags.Title != "Das Buch" || f.Tags.Artist != "Erzählerin" || f.Tags.Album != "Hörbuch" {
		t.Errorf("tags %+v", f.Tags)
	}
	if f.Timescale != 44100 || f.Start != 1024 || f.Length != 6*44100 {
		t.Errorf("timescale %d, edit %d+%d", f.Timescale, f.Start, f.Length)
	}
	want := []Chapter{{"Kapitel 1", 0, 2}, {"Kapitel 2", 2, 4.5}, {"Kapitel 3", 4.5, 6}}
	if len(f.Chapters) != len(want) {
		t.Fatalf("chapters %+v", f.Chapters)
	}
	for i, c := range f.Chapters {
		if c != want[i] {
			t.Errorf("chapter %d: %+v, want %+v", i, c, want[i])
		}
	}
	// The sample table: every sample inside the file, in order, the
	// sizes adding up to the mdat's payload.
	c := f.Cursor()
	var total int64
	prev := int64(0)
	for i := range f.Samples {
		off, size, err := c.Sample(i)
		if err != nil {
			t.Fatal(err)
		}
		if off < prev {
			t.Fatalf("sample %d at %d before the previous one", i, off)
		}
		prev = off + int64(size)
		total += int64(size)
	}
	// A jump back lands on the same place as reading in order.
	off5, size5, _ := c.Sample(5)
	c2 := f.Cursor()
	for i := range 6 {
		off, size, _ := c2.Sample(i)
		if i == 5 && (off != off5 || size != size5) {
			t.Errorf("sample 5: %d+%d after a jump, %d+%d in order", off5, size5, off, size)
		}
	}
	if total < 40000 {
		t.Errorf("samples add up to %d bytes", total)
	}
}

// TestChapterTrack reads the QuickTime chapter track when there are no
// Nero chapters.
func TestChapterTrack(t *testing.T) {
	path := makeBook(t)
	data, _ := os.ReadFile(path)
	i := bytes.Index(data, []byte("chpl"))
	if i < 0 {
		t.Fatal("no chpl box")
	}
	copy(data[i:], "free")
	f, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Chapters) != 3 || f.Chapters[1].Title != "Kapitel 2" || f.Chapters[1].Start != 2 || f.Chapters[2].End != 6 {
		t.Errorf("chapters %+v", f.Chapters)
	}
}
