package mp4

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzBoxes opens mutated MP4 files and walks every sample: an error is a
// correct answer; a panic, an allocation beyond the limits, or a sample
// outside the file is a bug.
func FuzzBoxes(f *testing.F) {
	for _, name := range []string{"seed/tone.m4b", "tone.m4a"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		c := file.Cursor()
		for i := range min(file.Samples, 1<<16) {
			off, size, err := c.Sample(i)
			if err != nil {
				break
			}
			if off < 0 || off+int64(size) > int64(len(data)) {
				t.Fatalf("sample %d at %d+%d in %d bytes", i, off, size, len(data))
			}
		}
		for _, ch := range file.Chapters {
			if !(ch.End > ch.Start) {
				t.Errorf("chapter %+v", ch)
			}
		}
	})
}
