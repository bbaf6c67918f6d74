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
// allocated for it.
package mp4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	maxDepth      = 10
	maxBoxes      = 1 << 16 // boxes visited in one file
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
}

func (rd *reader) readAt(p []byte, off int64) error {
	if off < 0 || off+int64(len(p)) > rd.size {
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
		var h [16]byte
		if err := rd.readAt(h[:8], off); err != nil {
			return nil, err
		}
		size := int64(binary.BigEndian.Uint32(h[:4]))
		hdr := int64(8)
		switch size {
		case 0:
			size = end - off
		case 1:
			if err := rd.readAt(h[8:16], off+8); err != nil {
				return nil, err
			}
			size = int64(binary.BigEndian.Uint64(h[8:16]))
			hdr = 16
		}
		if size < hdr || size > end-off {
			return nil, fmt.Errorf("%w: box %q of %d bytes at %d in a parent ending at %d", ErrCorrupt, h[4:8], size, off, end)
		}
		out = append(out, box{typ: string(h[4:8]), off: off, start: off + hdr, end: off + size})
		off += size
	}
	return out, nil
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
