package decode

import (
	"os"
	"path/filepath"
	"testing"
)

// TestChapterFile: a chapter's path names its audiobook file, as Open
// finds it; a file whose real name looks like one is itself.
func TestChapterFile(t *testing.T) {
	dir := t.TempDir()
	book := filepath.Join(dir, "book.m4b")
	odd := filepath.Join(dir, "odd.mp3#chapter=2")
	for _, p := range []string{book, odd} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for in, want := range map[string]string{ChapterPath(book, 3): book, book: book, odd: odd, book + "#chapter=x": book + "#chapter=x"} {
		if got := ChapterFile(in); got != want {
			t.Errorf("ChapterFile(%q) = %q, want %q", in, got, want)
		}
	}
}
