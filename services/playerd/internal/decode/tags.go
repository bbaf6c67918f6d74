package decode

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/dhowden/tag"
)

// Tags is what the library shows of a file's metadata.
type Tags struct {
	Title, Artist, Album string
	Picture              *Picture // embedded cover art, nil when there is none
}

// Picture is an embedded image.
type Picture struct {
	MIMEType string
	Data     []byte
}

// ErrNoTags reports a file without tags the box reads.
var ErrNoTags = tag.ErrNoTagsFound

// Tag readers only ever read the head of a file (ID3v2, FLAC metadata, Ogg
// header pages) or its last 128 bytes (ID3v1); a cover is rarely over a few
// MB. The checks below read the comment and picture blocks once, the tag
// reader once more.
const (
	tagBytes = 48 << 20
	tagTime  = 10 * time.Second
)

// ReadTags reads the title, artist, album and cover of path, behind the
// same boundary as Open. dhowden/tag reads only formats the boundary has
// checked first: for FLAC and Ogg the lengths inside comment and picture
// blocks, which it would otherwise allocate unchecked (vorbis.go:132).
func ReadTags(path string) (Tags, error) {
	src, err := openSource(path)
	if err != nil {
		return Tags{}, fmt.Errorf("tags: %w", err)
	}
	defer src.Close()
	t, err := readTagsFrom(src)
	if err != nil {
		return Tags{}, fmt.Errorf("tags %s: %w", filepath.Base(path), err)
	}
	return t, nil
}

func readTagsFrom(src *source) (Tags, error) {
	src.budget(tagBytes, tagTime)
	var t Tags
	err := contain("tags", func() error {
		if isOggFLAC(src) {
			var err error
			t, err = oggFLACTags(src)
			return err
		}
		if isMP4(src) {
			mt, _, _, _, err := mp4Info(src)
			if err != nil {
				return err
			}
			artist := mt.Artist
			if artist == "" {
				artist = mt.AlbumArtist
			}
			t.Title, t.Artist, t.Album = clean(mt.Title), clean(artist), clean(mt.Album)
			if len(mt.Cover) > 0 {
				t.Picture = &Picture{MIMEType: mt.CoverMIME, Data: mt.Cover}
			}
			if t.Title == "" && t.Artist == "" && t.Album == "" && t.Picture == nil {
				return ErrNoTags
			}
			return nil
		}
		m, err := readTags(src)
		if err != nil {
			return err
		}
		t.Title, t.Artist, t.Album = clean(m.Title()), clean(m.Artist()), clean(m.Album())
		if p := m.Picture(); p != nil && len(p.Data) > 0 {
			t.Picture = &Picture{MIMEType: p.MIMEType, Data: p.Data}
		}
		return nil
	})
	if err == nil && src.spent {
		err = ErrBudget
	}
	if err != nil {
		return Tags{}, err
	}
	return t, nil
}

// Info is what the library scan learns of a file.
type Info struct {
	Duration float64 // seconds
	Tags     Tags
	// Chapters are an audiobook's (M4B) chapters, nil for other files.
	Chapters []Chapter
	// Notice says how the file plays when that is less than it holds (an
	// HE-AAC file plays its AAC-LC core); "" otherwise.
	Notice string
	// TagErr is why the tags could not be read (ErrNoTags when there are
	// none); the file plays all the same.
	TagErr error
}

// ReadInfo is Duration and ReadTags with one opening of the file (two when
// the duration needs the decoder, which closes it).
func ReadInfo(path string) (Info, error) {
	src, err := openSource(path)
	if err != nil {
		return Info{}, fmt.Errorf("decode: %w", err)
	}
	defer func() { src.Close() }()
	var info Info
	if info.Duration, err = duration(src); err != nil {
		return Info{}, fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	if src.closed {
		if src, err = openSource(path); err != nil {
			return info, fmt.Errorf("decode: %w", err)
		}
	}
	if info.Tags, err = readTagsFrom(src); err != nil {
		info.TagErr = fmt.Errorf("tags %s: %w", filepath.Base(path), err)
	}
	src.budget(openBudget(src.size))
	err = contain("open", func() (err error) {
		switch {
		case isMP4(src):
			_, info.Chapters, _, info.Notice, err = mp4Info(src)
		case isADTS(src):
			info.Notice, err = adtsNotice(src)
		}
		return err
	})
	if err != nil {
		return Info{}, fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return info, nil
}

// isOggFLAC tells FLAC in Ogg by its first packet.
func isOggFLAC(src *source) bool {
	var h [64]byte
	n, _ := src.ReadAt(h[:], 0)
	return sniff(h[:n]) == "oggflac"
}

// isMP4 tells an MP4 file by its first box.
func isMP4(src *source) bool {
	var h [12]byte
	n, _ := src.ReadAt(h[:], 0)
	return sniff(h[:n]) == "mp4"
}

// clean keeps a tag value fit for display: trimmed and of bounded length.
func clean(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) > 512 {
		s = strings.ToValidUTF8(s[:512], "")
	}
	return s
}

func readTags(src *source) (tag.Metadata, error) {
	var h [12]byte
	n, _ := src.ReadAt(h[:], 0)
	head := h[:n]
	var check func(*source) error
	var read func(io.ReadSeeker) (tag.Metadata, error)
	switch {
	case bytes.HasPrefix(head, []byte("ID3")):
		// ID3v2 readers allocate at most 10 MB before reading and otherwise
		// only what was read, so the byte budget bounds them.
		read = tag.ReadID3v2Tags
	case bytes.HasPrefix(head, []byte("fLaC")):
		check, read = checkFLACTags, tag.ReadFLACTags
	case bytes.HasPrefix(head, []byte("OggS")):
		check = checkOggTags
		read = func(r io.ReadSeeker) (tag.Metadata, error) { return tag.ReadOGGTags(r) }
	case sniff(head) == "mp3":
		// A fixed 128 bytes at the end, if there are any.
		read = func(r io.ReadSeeker) (tag.Metadata, error) {
			m, err := tag.ReadID3v1Tags(r)
			if err != nil {
				return nil, ErrNoTags
			}
			return m, nil
		}
	default:
		return nil, ErrNoTags
	}
	if check != nil {
		if err := check(src); err != nil {
			return nil, err
		}
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	// The readers read field by field, a few bytes at a time: buffered,
	// a tag is a few system calls instead of one per field.
	return read(newBufferedFile(src, 4<<10))
}
