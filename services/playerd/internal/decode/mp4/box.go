// Package mp4 reads what an audio player needs from an MP4 file (ISO/IEC
// 14496-12 and -14, with Apple's metadata and chapter conventions): the
// first audio track's decoder configuration and sample table, its edit list
// and iTunSMPB gapless information, the iTunes tags with the cover, and
// chapters (Nero chpl or a QuickTime chapter track).
//
// The file is read through an io.ReaderAt. Sample sizes and chunk offsets
// stay in the file and are read as playing reaches them, so a ten-hour
// audiobook costs kilobytes, not the megabytes of its tables; every count
// and size is checked against the box holding it before anything is
// allocated for it. Every size and offset a file gives is checked without
// arithmetic that can overflow, so that a 64-bit size or offset near 2^63 or
// 2^64 is a damaged file, not a wrapped number.
//
// What a file's contents can make this package do is bounded by the limits
// below: how many boxes it visits, how much it reads into memory at once
// (a cover at most maxCover, 16 MB, as the library takes for a cover file;
// a larger one is left out and the file plays without it), and how many
// chapters it lists. Chapters and tags are extras: when their boxes are
// damaged the file plays without them.
package mp4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

var (
	// ErrCorrupt reports a file whose boxes contradict themselves.
	ErrCorrupt = errors.New("mp4: damaged file")
	// ErrUnsupported reports an MP4 file without audio this package reads:
	// no audio track, or one not in AAC (ALAC, AC-3, encrypted).
	ErrUnsupported = errors.New("mp4: unsupported file")
)

// Limits on what is read into memory. A real file is far below each.
const (
	maxBoxes = 1 << 16 // boxes visited in one file
	// maxTopBoxes bounds the top-level boxes before the moov box: a real
	// file has an ftyp and perhaps a free or wide box there, or an mdat.
	maxTopBoxes   = 64
	maxSmallBox   = 1 << 20 // a box read whole: stsd, elst, chpl, a tag
	maxCover      = 16 << 20
	maxTableItems = 1 << 20 // stts and stsc entries held in memory
	maxChapters   = 4096
)

type box struct {
	typ        string
	off        int64 // of the header
	start, end int64 // of the payload
}

func (b box) size() int64 { return b.end - b.start }

// reader walks boxes within bounds and counts them.
type reader struct {
	r     io.ReaderAt
	size  int64
	boxes int
	top   int // top-level boxes
}

// within reports whether n bytes at off lie in [0, size), without
// computing off+n.
func within(off, n, size int64) bool {
	return off >= 0 && n >= 0 && off <= size && n <= size-off
}

func (rd *reader) readAt(p []byte, off int64) error {
	if !within(off, int64(len(p)), rd.size) {
		return fmt.Errorf("%w: read of %d bytes at %d beyond the end (%d)", ErrCorrupt, len(p), off, rd.size)
	}
	n, err := rd.r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = fmt.Errorf("%w: short read at %d", ErrCorrupt, off)
	}
	return err
}

// children lists the boxes in [start, end).
func (rd *reader) children(start, end int64) ([]box, error) {
	var out []box
	for off := start; off < end; {
		if end-off < 8 {
			break // trailing padding some writers leave
		}
		rd.boxes++
		if rd.boxes > maxBoxes {
			return nil, fmt.Errorf("%w: more than %d boxes", ErrCorrupt, maxBoxes)
		}
		b, err := rd.header(off, end)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		off = b.end
	}
	return out, nil
}

// header reads the header of the box at off in a parent ending at end.
func (rd *reader) header(off, end int64) (box, error) {
	var h [16]byte
	if end-off < 8 {
		return box{}, fmt.Errorf("%w: %d bytes after the last box", ErrCorrupt, end-off)
	}
	if err := rd.readAt(h[:8], off); err != nil {
		return box{}, err
	}
	if binary.BigEndian.Uint32(h[:4]) == 1 {
		if err := rd.readAt(h[8:16], off+8); err != nil {
			return box{}, err
		}
	}
	size, hdr, err := BoxSize(h[:], end-off)
	if err != nil {
		return box{}, fmt.Errorf("%w at %d", err, off)
	}
	return box{typ: string(h[4:8]), off: off, start: off + hdr, end: off + size}, nil
}

// BoxSize is the size a box header gives (h holds 8 bytes, or 16 when the
// 32-bit size is 1) and the header's length, checked against what the
// parent has left: a size of 0 takes all of it, a size past 2^63 is too
// large. It is for readers that see the boxes go by, as a stream does.
func BoxSize(h []byte, left int64) (size, hdr int64, err error) {
	n, hn := uint64(binary.BigEndian.Uint32(h[:4])), uint64(8)
	switch n {
	case 0:
		n = uint64(max(left, 0))
	case 1:
		if len(h) < 16 {
			return 0, 0, fmt.Errorf("%w: box %q without its 64-bit size", ErrCorrupt, h[4:8])
		}
		n, hn = binary.BigEndian.Uint64(h[8:16]), 16
	}
	if n < hn || n > math.MaxInt64 || (left >= 0 && n > uint64(left)) {
		if left < 0 {
			return 0, 0, fmt.Errorf("%w: MP4 box %q of %d bytes", ErrCorrupt, h[4:8], n)
		}
		return 0, 0, fmt.Errorf("%w: MP4 box %q of %d bytes with %d left", ErrCorrupt, h[4:8], n, left)
	}
	return int64(n), int64(hn), nil
}

// read returns a box's payload, which must be small.
func (rd *reader) read(b box, limit int64) ([]byte, error) {
	if b.size() > limit {
		return nil, fmt.Errorf("%w: box %q of %d bytes", ErrCorrupt, b.typ, b.size())
	}
	p := make([]byte, b.size())
	return p, rd.readAt(p, b.start)
}

func find(bs []box, typ string) (box, bool) {
	for _, b := range bs {
		if b.typ == typ {
			return b, true
		}
	}
	return box{}, false
}

// path descends through the first box of each type.
func (rd *reader) path(parent box, types ...string) (box, bool, error) {
	b := parent
	for _, t := range types {
		kids, err := rd.children(b.start, b.end)
		if err != nil {
			return box{}, false, err
		}
		var ok bool
		if b, ok = find(kids, t); !ok {
			return box{}, false, nil
		}
	}
	return b, true, nil
}

// fields reads big-endian fields from a payload without running off it.
type fields struct {
	p   []byte
	bad bool
}

func (f *fields) bytes(n int) []byte {
	if n < 0 || n > len(f.p) {
		f.bad = true
		f.p = nil
		return nil
	}
	v := f.p[:n]
	f.p = f.p[n:]
	return v
}

func (f *fields) u8() uint8 {
	b := f.bytes(1)
	if f.bad {
		return 0
	}
	return b[0]
}

func (f *fields) u16() uint16 {
	b := f.bytes(2)
	if f.bad {
		return 0
	}
	return binary.BigEndian.Uint16(b)
}

func (f *fields) u32() uint32 {
	b := f.bytes(4)
	if f.bad {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func (f *fields) u64() uint64 {
	b := f.bytes(8)
	if f.bad {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
