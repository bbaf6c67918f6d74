package decode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
)

// Duration tells how long path plays, in seconds, for the library scan. It
// reads only what the format keeps in its headers where it can: an MP3's
// Xing/Info or VBRI header (or its size and bitrate when it is constant),
// FLAC's STREAMINFO (native or in Ogg), an Ogg Vorbis stream's last granule
// position. Other
// files, and MP3s whose headers do not settle it, are opened as the player
// opens them (for MP3 that walks every frame). The headers are checked as
// strictly as opening checks them, behind the same boundary, so a file
// Duration accepts plays or fails cleanly when played; a file whose audio
// is damaged beyond its headers is found then, and skipped by the player.
func Duration(path string) (float64, error) {
	src, err := openSource(path)
	if err != nil {
		return 0, fmt.Errorf("decode: %w", err)
	}
	defer src.Close()
	d, err := duration(src)
	if err != nil {
		return 0, fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return d, nil
}

func duration(src *source) (float64, error) {
	src.budget(openBudget(src.size))
	var d float64
	var ok bool
	err := contain("open", func() (err error) {
		d, ok, err = headerDuration(src)
		return err
	})
	if err == nil && src.spent {
		err = fmt.Errorf("open: %w", ErrBudget)
	}
	if err != nil {
		return 0, err
	}
	if ok {
		// The same bound the player puts on a decoder's length.
		if d < 0 || d > 24*3600 {
			return 0, fmt.Errorf("%w: duration %.0f s", ErrCorrupt, d)
		}
		return d, nil
	}
	g, format, err := open(src)
	if err != nil {
		return 0, err
	}
	defer g.Close()
	return float64(g.Len()) / float64(format.SampleRate), nil
}

// headerDuration is the duration from the headers; ok is false when they do
// not tell it and the file has to be opened.
func headerDuration(src *source) (d float64, ok bool, err error) {
	var head [64]byte
	n, err := src.ReadAt(head[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false, err
	}
	switch sniff(head[:n]) {
	case "mp3":
		return mp3Duration(src)
	case "flac":
		return flacDuration(src)
	case "vorbis":
		return vorbisDuration(src)
	case "oggflac":
		return oggFLACDuration(src)
	case "mp4":
		_, _, d, _, err := mp4Info(src)
		return d, err == nil, err
	}
	return 0, false, nil
}

// flacDuration reads the total sample count of STREAMINFO, after the checks
// openFLAC makes, and that audio frames follow the metadata.
func flacDuration(src *source) (float64, bool, error) {
	blocks, audio, err := flacBlocks(src)
	if err != nil {
		return 0, false, fmt.Errorf("flac: %w", err)
	}
	if blocks[0].size != 34 {
		return 0, false, fmt.Errorf("flac: %w: STREAMINFO of %d bytes", ErrCorrupt, blocks[0].size)
	}
	var si [34]byte
	if _, err := src.ReadAt(si[:], blocks[0].off); err != nil {
		return 0, false, fmt.Errorf("flac: %w", err)
	}
	if err := checkStreamInfo(si[:]); err != nil {
		return 0, false, fmt.Errorf("flac: %w", err)
	}
	var sync [2]byte
	if _, err := src.ReadAt(sync[:], audio); err != nil || sync[0] != 0xff || sync[1]&0xfe != 0xf8 {
		return 0, false, fmt.Errorf("flac: %w: no audio frame after the metadata", ErrCorrupt)
	}
	rate := int64(si[10])<<12 | int64(si[11])<<4 | int64(si[12])>>4
	total := int64(si[13]&0x0f)<<32 | int64(binary.BigEndian.Uint32(si[14:18]))
	if total == 0 {
		return 0, false, nil // unknown to the encoder
	}
	return float64(total) / float64(rate), true, nil
}

// vorbisDuration checks the three header packets as openVorbis does and
// takes the last page's granule position, which is what the decoder reports
// as the stream's length.
func vorbisDuration(src *source) (float64, bool, error) {
	hs, err := headerPackets(bufio.NewReaderSize(io.NewSectionReader(src, 0, src.size), 4<<10), 3)
	if err == nil {
		err = checkVorbisHeaders(hs)
	}
	if err != nil {
		return 0, false, fmt.Errorf("vorbis: %w", err)
	}
	rate := binary.LittleEndian.Uint32(hs[0][12:])
	last, err := lastGranule(src)
	if err != nil {
		return 0, false, fmt.Errorf("vorbis: %w", err)
	}
	if last <= 0 {
		return 0, false, fmt.Errorf("vorbis: %w: no audio in the file", ErrCorrupt)
	}
	return float64(last) / float64(rate), true, nil
}
