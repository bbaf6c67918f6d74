// Package backup writes the box's configuration as a ZIP archive and
// restores it. The archive holds the files of the data directory a parent
// configured (the owner lists them: File), never a secret, optionally the
// media. A restore checks every entry before it replaces anything, and
// replaces the files all at once through a journal (restore.go), so a
// crash leaves the old set or the new one, never a mix.
package backup

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
)

const (
	// Format names the archive in its manifest.
	Format = "storybox-backup"
	// FormatVersion is the layout of the archive this box writes and reads.
	FormatVersion = 1
	// ManifestName is the manifest's entry.
	ManifestName = "manifest.json"
	// MediaDir holds the media in an archive made with media.
	MediaDir = "media/"
)

// File is one file of the data directory that belongs in a backup. The
// list of them is the owner's, in one place, so a new kind of parent
// configuration (cards, stations) is backed up by adding itself there.
type File struct {
	// Name is the file's name in the data directory and in the archive.
	Name string
	// Read returns the current content, or nil when there is none (the
	// defaults are in use).
	Read func() ([]byte, error)
	// Check validates a restored copy; it is the same check the file gets
	// when it is changed through the API.
	Check func([]byte) error
	// Apply makes the box act on the file after a restore replaced it
	// (or removed it).
	Apply func() error
}

// Manifest describes an archive.
type Manifest struct {
	Format        string    `json:"format"`
	FormatVersion int       `json:"format_version"`
	BoxID         string    `json:"box_id"`
	Version       string    `json:"version"` // of playerd
	CreatedAt     time.Time `json:"created_at"`
	Files         []string  `json:"files"`
	Media         bool      `json:"media"`
}

// Write streams an archive to w: the manifest, the files of the list that
// exist, and with media (the media directory, may be nil) every visible
// regular file below it under media/. Nothing is held in memory but the
// small files; media files are stored, not compressed (audio and images
// are compressed already).
func Write(w io.Writer, m Manifest, files []File, media fs.FS) error {
	type entry struct {
		name string
		data []byte
	}
	var entries []entry
	m.Format, m.FormatVersion, m.Media, m.Files = Format, FormatVersion, media != nil, []string{}
	for _, f := range files {
		data, err := f.Read()
		if err != nil {
			return fmt.Errorf("backup: %s: %w", f.Name, err)
		}
		if data != nil {
			entries = append(entries, entry{f.Name, data})
			m.Files = append(m.Files, f.Name)
		}
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	zw := zip.NewWriter(w)
	for _, e := range append([]entry{{ManifestName, append(manifest, '\n')}}, entries...) {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: m.CreatedAt})
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		if _, err := fw.Write(e.data); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	if media != nil {
		if err := writeMedia(zw, media); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

func writeMedia(zw *zip.Writer, media fs.FS) error {
	return fs.WalkDir(media, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return fmt.Errorf("backup: media: %w", err)
			}
			return nil // an unreadable directory is left out
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil // hidden files, interrupted uploads
		}
		if !d.Type().IsRegular() {
			return nil // directories come with their files; links are not media
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		src, err := media.Open(p)
		if err != nil {
			return nil // gone since the walk
		}
		defer src.Close()
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: path.Join(MediaDir, p), Method: zip.Store, Modified: info.ModTime()})
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		if _, err := io.Copy(fw, src); err != nil {
			return fmt.Errorf("backup: media %s: %w", p, err)
		}
		return nil
	})
}
