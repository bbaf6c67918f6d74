// Package decode opens audio files as seekable beep streams. Every decoder is
// pure Go, so playerd builds without cgo for gokrazy.
package decode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/internal/fault"
)

// ErrUnsupported reports a file whose format no decoder handles.
var ErrUnsupported = fault.New(fault.Unsupported, "unsupported audio format")

// Extensions lists the file extensions the library treats as audio.
var Extensions = map[string]bool{
	".mp3": true, ".flac": true, ".ogg": true, ".oga": true, ".opus": true, ".wav": true,
	".m4a": true, ".m4b": true, ".aac": true,
}

// IsAudio reports whether name has an audio extension.
func IsAudio(name string) bool { return Extensions[strings.ToLower(filepath.Ext(name))] }

// Open decodes path. The format is sniffed from the content, not trusted from
// the extension, so a mislabelled file still plays or fails cleanly. The
// decoder runs behind the boundary in guard.go: a damaged or hostile file
// gives an error (ErrCorrupt, ErrBudget, ErrUnsupported), here or later from
// the stream's Err or Seek, never a panic.
//
// A path made by ChapterPath opens that chapter of an audiobook: a stream of
// the chapter alone.
func Open(path string) (beep.StreamSeekCloser, beep.Format, error) {
	src, err := openSource(path)
	chapter := 0
	if file, n, ok := splitChapter(path); ok && errors.Is(err, fs.ErrNotExist) {
		src, err = openSource(file)
		chapter = n
	}
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("decode: %w", err)
	}
	src.chapter = chapter
	g, format, err := open(src)
	if err != nil {
		src.Close()
		return nil, beep.Format{}, fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return g, format, nil
}

func open(src *source) (*guarded, beep.Format, error) {
	src.budget(openBudget(src.size))
	var s beep.StreamSeekCloser
	var format beep.Format
	err := contain("open", func() (err error) {
		s, format, err = openFile(src)
		return err
	})
	if err == nil && src.spent {
		err = fmt.Errorf("open: %w", ErrBudget)
	}
	if err != nil {
		if s != nil {
			_ = contain("close", s.Close)
		}
		return nil, beep.Format{}, err
	}
	g := &guarded{s: s, src: src}
	if format.SampleRate < 1000 || format.SampleRate > 768000 || format.NumChannels < 1 {
		g.Close()
		return nil, beep.Format{}, fmt.Errorf("%w: format %+v", ErrCorrupt, format)
	}
	if g.length, err = streamLength(s, format); err != nil {
		g.Close()
		return nil, beep.Format{}, err
	}
	return g, format, nil
}

func openFile(src *source) (beep.StreamSeekCloser, beep.Format, error) {
	var head [64]byte
	n, err := src.ReadAt(head[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, beep.Format{}, err
	}
	switch kind := sniff(head[:n]); kind {
	case "flac":
		return openFLAC(src)
	case "wav":
		return openWAV(src)
	case "vorbis":
		return openVorbis(src)
	case "opus":
		return openOpus(src)
	case "oggflac":
		return openOggFLAC(src)
	case "mp3":
		if adtsAfterID3(src) {
			return openADTS(src)
		}
		return openMP3(src)
	case "aac":
		return openADTS(src)
	case "mp4":
		return openMP4(src, src.chapter)
	}
	return nil, beep.Format{}, ErrUnsupported
}

func sniff(h []byte) string {
	switch {
	case bytes.HasPrefix(h, []byte("fLaC")):
		return "flac"
	case bytes.HasPrefix(h, []byte("RIFF")) && len(h) >= 12 && string(h[8:12]) == "WAVE":
		return "wav"
	case bytes.HasPrefix(h, []byte("OggS")):
		if bytes.Contains(h, []byte("OpusHead")) {
			return "opus"
		}
		if bytes.Contains(h, []byte("\x01vorbis")) {
			return "vorbis"
		}
		if bytes.Contains(h, []byte("\x7fFLAC")) {
			return "oggflac"
		}
		return ""
	case bytes.HasPrefix(h, []byte("ID3")):
		return "mp3"
	case len(h) >= 8 && string(h[4:8]) == "ftyp":
		return "mp4"
	case len(h) >= 2 && h[0] == 0xFF && h[1]&0xF6 == 0xF0:
		return "aac" // ADTS: MPEG sync with layer 0
	case len(h) >= 2 && h[0] == 0xFF && h[1]&0xE0 == 0xE0:
		return "mp3" // MPEG audio frame sync without an ID3 tag
	}
	return ""
}

// readBuffer is what a playing decoder reads from its file at once: several
// seconds of compressed audio, so that while playing a system call is rare.
// Each one can wake the Go runtime's system monitor into a burst of polling
// (docs/performance.md); the FLAC and Vorbis decoders' own reads are 4 KB
// and a page's few dozen bytes.
const readBuffer = 64 << 10

// bufferedFile gives a decoder buffered reads while keeping Seek and Close.
type bufferedFile struct {
	f   io.ReadSeekCloser
	r   *bufio.Reader
	pos int64 // position of the next byte Read returns
}

func newBufferedFile(f io.ReadSeekCloser, size int) *bufferedFile {
	return &bufferedFile{f: f, r: bufio.NewReaderSize(f, size)}
}

func (b *bufferedFile) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.pos += int64(n)
	return n, err
}

func (b *bufferedFile) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekCurrent {
		off, whence = b.pos+off, io.SeekStart
	}
	pos, err := b.f.Seek(off, whence)
	if err != nil {
		return 0, err
	}
	b.pos = pos
	b.r.Reset(b.f)
	return pos, nil
}

func (b *bufferedFile) Close() error { return b.f.Close() }
