package library

import (
	"fmt"
	"net/http"
	"os"

	"github.com/dhowden/tag"
)

// Cover returns a folder's cover image and its MIME type: the cover file in
// the folder, or else the picture embedded in its first track that has one.
func (l *Library) Cover(id string) ([]byte, string, error) {
	f, ok := l.Folder(id)
	if !ok || f.Cover == nil {
		return nil, "", ErrNotFound
	}
	if f.coverFile != "" {
		data, err := os.ReadFile(f.coverFile)
		if err != nil {
			return nil, "", fmt.Errorf("library: cover: %w", err)
		}
		return data, http.DetectContentType(data), nil
	}
	file, err := os.Open(f.coverTrack)
	if err != nil {
		return nil, "", fmt.Errorf("library: cover: %w", err)
	}
	defer file.Close()
	m, err := tag.ReadFrom(file)
	if err != nil || m.Picture() == nil {
		return nil, "", ErrNotFound
	}
	data := m.Picture().Data
	return data, http.DetectContentType(data), nil
}
