package library

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/storybox/storybox/services/playerd/internal/decode"
)

// Cover returns a folder's cover image and its MIME type: the cover file in
// the folder, or else the picture embedded in its first track that has one.
func (l *Library) Cover(id string) ([]byte, string, error) {
	f, ok := l.Folder(id)
	if !ok || f.Cover == nil {
		return nil, "", ErrNotFound
	}
	if f.coverFile != "" {
		data, err := readCover(f.coverFile)
		if err != nil {
			return nil, "", fmt.Errorf("library: cover: %w", err)
		}
		return data, http.DetectContentType(data), nil
	}
	// The track may have changed since the scan: read it through the
	// decoder boundary again.
	t, err := decode.ReadTags(f.coverTrack)
	if err != nil || t.Picture == nil {
		return nil, "", ErrNotFound
	}
	data := t.Picture.Data
	return data, http.DetectContentType(data), nil
}

// maxCover bounds a cover file read into memory: a "cover.jpg" of a few GB
// must not take the box's memory.
const maxCover = 16 << 20

func readCover(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCover+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCover {
		return nil, fmt.Errorf("%s is larger than %d MB", filepath.Base(path), maxCover>>20)
	}
	return data, nil
}
