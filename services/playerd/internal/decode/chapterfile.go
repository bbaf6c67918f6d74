package decode

import (
	"errors"
	"io/fs"
	"os"
)

// ChapterFile is the audiobook file a path made by ChapterPath names, as
// Open finds it; any other path is returned as it is.
func ChapterFile(path string) string {
	if file, _, ok := splitChapter(path); ok {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return file
		}
	}
	return path
}
