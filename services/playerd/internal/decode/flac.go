package decode

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/gopxl/beep/v2"
	"github.com/gopxl/beep/v2/flac"
)

// mewkiz/flac (v1.0.12) parses every metadata block at open and allocates
// what their length fields say before reading: a picture's data length
// (meta/picture.go:117) or a comment count (meta/vorbiscomment.go:45) of
// 4 GB is a fatal out-of-memory on a Pi, not a panic. So the boundary walks
// the blocks itself and hands the decoder only what it needs, STREAMINFO and
// SEEKTABLE, checked, in front of the audio frames.

const (
	flacMaxBlocks   = 1024
	flacStreamInfo  = 0
	flacSeekTable   = 3
	flacComment     = 4
	flacPicture     = 6
	flacMaxSeekTbl  = 1 << 20
	flacMaxTagBlock = 16 << 20 // the largest a block can be (24-bit length)
)

type flacBlock struct {
	typ  byte
	off  int64 // of the body
	size int64
}

// flacBlocks walks the metadata blocks (after an optional ID3v2 tag) and
// returns them with the offset of the first audio frame.
func flacBlocks(src *source) ([]flacBlock, int64, error) {
	off, err := skipID3v2(src)
	if err != nil {
		return nil, 0, err
	}
	var sig [4]byte
	if _, err := src.ReadAt(sig[:], off); err != nil || string(sig[:]) != "fLaC" {
		return nil, 0, fmt.Errorf("%w: no FLAC signature", ErrCorrupt)
	}
	off += 4
	var blocks []flacBlock
	for range flacMaxBlocks {
		var h [4]byte
		if _, err := src.ReadAt(h[:], off); err != nil {
			return nil, 0, fmt.Errorf("%w: truncated metadata", ErrCorrupt)
		}
		b := flacBlock{typ: h[0] & 0x7f, off: off + 4, size: int64(h[1])<<16 | int64(h[2])<<8 | int64(h[3])}
		if b.typ == 127 || b.off+b.size > src.size {
			return nil, 0, fmt.Errorf("%w: metadata block %d of %d bytes", ErrCorrupt, b.typ, b.size)
		}
		if (len(blocks) == 0) != (b.typ == flacStreamInfo) {
			return nil, 0, fmt.Errorf("%w: STREAMINFO is not the first block", ErrCorrupt)
		}
		blocks = append(blocks, b)
		off = b.off + b.size
		if h[0]&0x80 != 0 {
			return blocks, off, nil
		}
	}
	return nil, 0, fmt.Errorf("%w: more than %d metadata blocks", ErrCorrupt, flacMaxBlocks)
}

// skipID3v2 returns the size of an ID3v2 tag at the start, which FLAC
// files sometimes carry although the format has no place for one.
func skipID3v2(src *source) (int64, error) {
	var h [10]byte
	if n, _ := src.ReadAt(h[:], 0); n < 10 || string(h[:3]) != "ID3" {
		return 0, nil
	}
	for _, b := range h[6:] {
		if b&0x80 != 0 {
			return 0, fmt.Errorf("%w: ID3v2 size", ErrCorrupt)
		}
	}
	n := int64(h[6])<<21 | int64(h[7])<<14 | int64(h[8])<<7 | int64(h[9]) + 10
	if h[5]&0x10 != 0 {
		n += 10 // footer
	}
	return n, nil
}

func openFLAC(src *source) (beep.StreamSeekCloser, beep.Format, error) {
	blocks, audio, err := flacBlocks(src)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("flac: %w", err)
	}
	info := blocks[0]
	if info.size != 34 {
		return nil, beep.Format{}, fmt.Errorf("flac: %w: STREAMINFO of %d bytes", ErrCorrupt, info.size)
	}
	si := make([]byte, 34)
	if _, err := src.ReadAt(si, info.off); err != nil {
		return nil, beep.Format{}, fmt.Errorf("flac: %w", err)
	}
	if err := checkStreamInfo(si); err != nil {
		return nil, beep.Format{}, fmt.Errorf("flac: %w", err)
	}
	var seek []byte
	for _, b := range blocks {
		if b.typ == flacSeekTable && b.size%18 == 0 && b.size > 0 && b.size <= flacMaxSeekTbl {
			seek = make([]byte, b.size)
			if _, err := src.ReadAt(seek, b.off); err != nil {
				return nil, beep.Format{}, fmt.Errorf("flac: %w", err)
			}
			break
		}
	}
	head := []byte("fLaC")
	last := byte(0x80)
	if seek != nil {
		last = 0
	}
	head = append(head, last|flacStreamInfo, 0, 0, 34)
	head = append(head, si...)
	if seek != nil {
		n := len(seek)
		head = append(head, 0x80|flacSeekTable, byte(n>>16), byte(n>>8), byte(n))
		head = append(head, seek...)
	}
	return flac.Decode(newBufferedFile(newSpliced(head, src, audio, src.size-audio), readBuffer))
}

// checkStreamInfo refuses values the decoder would trip over.
func checkStreamInfo(b []byte) error {
	minBlock, maxBlock := int(b[0])<<8|int(b[1]), int(b[2])<<8|int(b[3])
	rate := int(b[10])<<12 | int(b[11])<<4 | int(b[12])>>4
	channels := int(b[12]>>1&7) + 1
	bits := int(b[12]&1)<<4 | int(b[13]>>4) + 1
	if minBlock < 16 || maxBlock < minBlock || rate < 1000 || rate > 655350 || bits < 4 || channels > 8 {
		return fmt.Errorf("%w: STREAMINFO block %d..%d, %d Hz, %d bits", ErrCorrupt, minBlock, maxBlock, rate, bits)
	}
	return nil
}

// checkFLACTags checks the comment and picture blocks a tag reader parses.
func checkFLACTags(src *source) error {
	blocks, _, err := flacBlocks(src)
	if err != nil {
		return err
	}
	for _, b := range blocks {
		if b.typ != flacComment && b.typ != flacPicture {
			continue
		}
		body := make([]byte, b.size)
		if _, err := src.ReadAt(body, b.off); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		if b.typ == flacComment {
			err = checkVorbisComment(body)
		} else {
			err = checkPicture(body)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// reader walks length-prefixed fields of an in-memory block.
type reader struct {
	b  []byte
	ok bool
}

func (r *reader) u32(order binary.ByteOrder) int {
	if !r.ok || len(r.b) < 4 {
		r.ok = false
		return 0
	}
	v := order.Uint32(r.b)
	r.b = r.b[4:]
	return int(v)
}

func (r *reader) bytes(n int) []byte {
	if !r.ok || n < 0 || n > len(r.b) {
		r.ok = false
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// checkVorbisComment checks a Vorbis comment (FLAC block, Ogg Vorbis and
// Opus tags): every length inside the block, and any embedded picture.
func checkVorbisComment(b []byte) error {
	le := binary.LittleEndian
	r := &reader{b: b, ok: true}
	r.bytes(r.u32(le)) // vendor
	count := r.u32(le)
	if count > len(r.b)/4 {
		return fmt.Errorf("%w: %d comments in %d bytes", ErrCorrupt, count, len(b))
	}
	for range count {
		c := r.bytes(r.u32(le))
		if k, v, ok := strings.Cut(string(c), "="); ok && strings.EqualFold(k, "METADATA_BLOCK_PICTURE") {
			pic, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return fmt.Errorf("%w: picture comment: %v", ErrCorrupt, err)
			}
			if err := checkPicture(pic); err != nil {
				return err
			}
		}
	}
	if !r.ok {
		return fmt.Errorf("%w: comment lengths exceed the block", ErrCorrupt)
	}
	return nil
}

// checkPicture checks a FLAC picture block: type, MIME type, description,
// four dimensions and the data, each length within the block.
func checkPicture(b []byte) error {
	be := binary.BigEndian
	r := &reader{b: b, ok: true}
	r.u32(be)
	r.bytes(r.u32(be))
	r.bytes(r.u32(be))
	r.bytes(16)
	r.bytes(r.u32(be))
	if !r.ok {
		return fmt.Errorf("%w: picture lengths exceed the block", ErrCorrupt)
	}
	return nil
}
