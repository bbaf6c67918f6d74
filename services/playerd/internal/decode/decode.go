// Package decode opens audio files as seekable beep streams. Every decoder is
// pure Go, so playerd builds without cgo for gokrazy.
package decode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gopxl/beep/v2"
	"github.com/gopxl/beep/v2/flac"
	"github.com/gopxl/beep/v2/mp3"
	"github.com/gopxl/beep/v2/vorbis"
	"github.com/gopxl/beep/v2/wav"
)

// ErrUnsupported reports a file whose format no decoder handles.
var ErrUnsupported = errors.New("unsupported audio format")

// Extensions lists the file extensions the library treats as audio.
var Extensions = map[string]bool{
	".mp3": true, ".flac": true, ".ogg": true, ".oga": true, ".opus": true, ".wav": true,
}

// IsAudio reports whether name has an audio extension.
func IsAudio(name string) bool { return Extensions[strings.ToLower(filepath.Ext(name))] }

// Open decodes path. The format is sniffed from the content, not trusted from
// the extension, so a mislabelled file still plays or fails cleanly.
func Open(path string) (beep.StreamSeekCloser, beep.Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("decode: %w", err)
	}
	s, format, err := openFile(f)
	if err != nil {
		f.Close() // decoders close it on most errors; a second Close is harmless
		return nil, beep.Format{}, fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	if format.SampleRate <= 0 || format.NumChannels <= 0 {
		s.Close()
		return nil, beep.Format{}, fmt.Errorf("decode %s: invalid format %+v", filepath.Base(path), format)
	}
	return s, format, nil
}

func openFile(f *os.File) (beep.StreamSeekCloser, beep.Format, error) {
	var head [64]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, beep.Format{}, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, beep.Format{}, err
	}
	switch kind := sniff(head[:n]); kind {
	case "flac":
		// mewkiz/flac seeks only on an io.ReadSeeker: hand it the file itself.
		return flac.Decode(f)
	case "wav":
		return wav.Decode(f)
	case "vorbis":
		return vorbis.Decode(f)
	case "opus":
		return decodeOpus(f)
	case "mp3":
		// go-mp3 reads every frame header at open to build its seek table,
		// one small read per frame: buffering cuts the system calls.
		return mp3.Decode(newBufferedFile(f))
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
		return ""
	case bytes.HasPrefix(h, []byte("ID3")):
		return "mp3"
	case len(h) >= 2 && h[0] == 0xFF && h[1]&0xE0 == 0xE0:
		return "mp3" // MPEG audio frame sync without an ID3 tag
	}
	return ""
}

// bufferedFile gives a decoder buffered reads while keeping Seek and Close.
type bufferedFile struct {
	f   *os.File
	r   *bufio.Reader
	pos int64 // position of the next byte Read returns
}

func newBufferedFile(f *os.File) *bufferedFile {
	return &bufferedFile{f: f, r: bufio.NewReaderSize(f, 64<<10)}
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
