package decode

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"

	"errors"
	"io"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/playerd/internal/decode/flac"
)

// FLAC is decoded by our own decoder (package flac), which reads the file
// itself through a window of a few hundred KB. The boundary still walks the
// metadata blocks here: the scan's duration and the tag readers use the walk
// and its checks without touching the audio.

const (
	flacMaxBlocks   = 1024
	flacStreamInfo  = 0
	flacComment     = 4
	flacPicture     = 6
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
	blocks, _, err := flacBlocks(src)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("flac: %w", err)
	}
	if blocks[0].size != 34 {
		return nil, beep.Format{}, fmt.Errorf("flac: %w: STREAMINFO of %d bytes", ErrCorrupt, blocks[0].size)
	}
	var si [34]byte
	if _, err := src.ReadAt(si[:], blocks[0].off); err != nil {
		return nil, beep.Format{}, fmt.Errorf("flac: %w", err)
	}
	if err := checkStreamInfo(si[:]); err != nil {
		return nil, beep.Format{}, fmt.Errorf("flac: %w", err)
	}
	d, err := flac.NewFile(src, src.size)
	if err != nil {
		return nil, beep.Format{}, flacError(err)
	}
	n, err := d.Length()
	if err != nil {
		return nil, beep.Format{}, flacError(err)
	}
	info := d.Info()
	s := &flacStream{d: d, closer: src, length: int(min(n, 1<<40)), scale: 1 / float64(int64(1)<<(info.BitsPerSample-1))}
	format := beep.Format{SampleRate: beep.SampleRate(info.SampleRate), NumChannels: min(info.Channels, 2), Precision: 2}
	return s, format, nil
}

func flacError(err error) error {
	if errors.Is(err, flac.ErrFormat) {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return fmt.Errorf("flac: %w", err)
}

// flacStream is the decoder as a beep stream: mono on both sides, of more
// channels the first pair (front left and right), as the other decoders.
type flacStream struct {
	d       *flac.Decoder
	closer  io.Closer
	length  int
	scale   float64
	pending [][]int32 // what is left of the last frame
	err     error
}

func (s *flacStream) Stream(samples [][2]float64) (int, bool) {
	n := 0
	for n < len(samples) && s.err == nil {
		if len(s.pending) == 0 || len(s.pending[0]) == 0 {
			fr, err := s.d.Frame()
			if err != nil {
				if err != io.EOF {
					s.err = flacError(err)
				}
				break
			}
			s.pending = fr
		}
		l, r := s.pending[0], s.pending[0]
		if len(s.pending) > 1 {
			r = s.pending[1]
		}
		k := min(len(l), len(samples)-n)
		out := samples[n : n+k]
		l, r = l[:k], r[:k]
		for i := range out {
			out[i] = [2]float64{float64(l[i]) * s.scale, float64(r[i]) * s.scale}
		}
		for ch := range s.pending {
			s.pending[ch] = s.pending[ch][k:]
		}
		n += k
	}
	return n, n > 0
}

func (s *flacStream) Err() error { return s.err }

func (s *flacStream) Len() int { return s.length }

// Position counts what was handed out: the decoder's position less what
// is still pending of its frame.
func (s *flacStream) Position() int {
	p := int(s.d.Position())
	if len(s.pending) > 0 {
		p -= len(s.pending[0])
	}
	return p
}

func (s *flacStream) Seek(p int) error {
	s.pending = nil
	if err := s.d.Seek(uint64(p)); err != nil {
		return flacError(err)
	}
	return nil
}

func (s *flacStream) Close() error { return s.closer.Close() }

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
