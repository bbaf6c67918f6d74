package decode

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/gopxl/beep/v2"
	"github.com/gopxl/beep/v2/vorbis"
)

const (
	oggHeaderBytes = 27
	// oggMaxPacket bounds a packet that continues page after page; header
	// packets with cover art are the largest real ones.
	oggMaxPacket = 16 << 20
	// oggMaxHeaderPages bounds the pages read to find the header packets.
	oggMaxHeaderPages = 4096
)

var errOgg = fmt.Errorf("%w: malformed ogg stream", ErrCorrupt)

type pageHeader struct {
	continued bool
	bos       bool // first page of a logical stream (a new link in a chained stream)
	granule   int64
	serial    uint32
	segments  []byte
}

// readPage reads one Ogg page and reports its total size in bytes.
func readPage(r io.Reader) (pageHeader, []byte, int64, error) {
	var h [oggHeaderBytes]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: truncated page", errOgg)
		}
		return pageHeader{}, nil, 0, err
	}
	if string(h[:4]) != "OggS" || h[4] != 0 {
		return pageHeader{}, nil, 0, fmt.Errorf("%w: bad page header", errOgg)
	}
	segs := make([]byte, h[26])
	if _, err := io.ReadFull(r, segs); err != nil {
		return pageHeader{}, nil, 0, fmt.Errorf("%w: truncated page", errOgg)
	}
	n := 0
	for _, l := range segs {
		n += int(l)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return pageHeader{}, nil, 0, fmt.Errorf("%w: truncated page", errOgg)
	}
	ph := pageHeader{
		continued: h[5]&1 != 0, bos: h[5]&2 != 0, granule: int64(binary.LittleEndian.Uint64(h[6:14])),
		serial: binary.LittleEndian.Uint32(h[14:18]), segments: segs,
	}
	return ph, body, int64(oggHeaderBytes + len(segs) + n), nil
}

// packets joins page bodies into packets, including packets that span
// pages.
type packets struct {
	pending []byte
	serial  uint32
	limit   int // longest packet accepted; 0 means oggMaxPacket
}

// add splits a page body into the packets it completes.
func (pk *packets) add(h pageHeader, body []byte) ([][]byte, error) {
	var out [][]byte
	if !h.continued {
		pk.pending = nil
	}
	off := 0
	for _, l := range h.segments {
		pk.pending = append(pk.pending, body[off:off+int(l)]...)
		off += int(l)
		if limit := cmp.Or(pk.limit, oggMaxPacket); len(pk.pending) > limit {
			return nil, fmt.Errorf("%w: packet longer than %d bytes", errOgg, limit)
		}
		if l < 255 {
			out = append(out, pk.pending)
			pk.pending = nil
		}
	}
	return out, nil
}

// headerPackets reads the first n packets of an Ogg stream. Their pages
// must all belong to one logical stream, so that a tag reader that joins
// pages by serial number sees the same packets.
func headerPackets(r io.Reader, n int) ([][]byte, error) {
	var pk packets
	var out [][]byte
	for i := range oggMaxHeaderPages {
		h, body, _, err := readPage(r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: missing headers", errOgg)
			}
			return nil, err
		}
		if i == 0 {
			pk.serial = h.serial
		} else if h.serial != pk.serial {
			return nil, fmt.Errorf("%w: headers interleaved with another stream", errOgg)
		}
		p, err := pk.add(h, body)
		if err != nil {
			return nil, err
		}
		if out = append(out, p...); len(out) >= n {
			return out[:n], nil
		}
	}
	return nil, fmt.Errorf("%w: headers span more than %d pages", errOgg, oggMaxHeaderPages)
}

// jfreymuth/vorbis (v1.0.2) allocates what the headers declare before it
// reads: a comment count of 2³² strings (header.go:49), a codebook of
// 2²⁴ entries × 2¹⁶ dimensions (codebook.go:58-65), and 2³²-2 entries for a
// codebook with none (codebook.go:22). Those are fatal out-of-memory errors,
// not panics, so the boundary checks the three header packets first and
// opens the file only when they are sane.
func openVorbis(src *source) (beep.StreamSeekCloser, beep.Format, error) {
	hs, err := headerPackets(bufio.NewReaderSize(io.NewSectionReader(src, 0, src.size), 32<<10), 3)
	if err == nil {
		err = checkVorbisHeaders(hs)
	}
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("vorbis: %w", err)
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, beep.Format{}, err
	}
	return vorbis.Decode(newBufferedFile(src, readBuffer))
}

// vorbisMaxBookCost bounds the memory the codebooks may take (about 4 bytes
// per unit): real encoders stay far below a million.
const vorbisMaxBookCost = 4 << 20

func checkVorbisHeaders(hs [][]byte) error {
	id, comment, setup := hs[0], hs[1], hs[2]
	if len(id) < 30 || !bytes.HasPrefix(id, []byte("\x01vorbis")) {
		return fmt.Errorf("%w: no identification header", ErrCorrupt)
	}
	channels, rate := int(id[11]), binary.LittleEndian.Uint32(id[12:])
	b0, b1 := id[28]&15, id[28]>>4
	if binary.LittleEndian.Uint32(id[7:]) != 0 || channels < 1 || channels > 8 || rate < 1000 || rate > 768000 ||
		b0 < 6 || b1 > 13 || b0 > b1 || id[29]&1 == 0 {
		return fmt.Errorf("%w: identification header: %d channels, %d Hz, block sizes 2^%d, 2^%d", ErrCorrupt, channels, rate, b0, b1)
	}
	if !bytes.HasPrefix(comment, []byte("\x03vorbis")) {
		return fmt.Errorf("%w: no comment header", ErrCorrupt)
	}
	if err := checkVorbisComment(comment[7:]); err != nil {
		return err
	}
	if !bytes.HasPrefix(setup, []byte("\x05vorbis")) {
		return fmt.Errorf("%w: no setup header", ErrCorrupt)
	}
	return checkCodebooks(setup[7:])
}

// bitReader reads Vorbis' least-significant-bit-first fields.
type bitReader struct {
	b   []byte
	pos int // in bits
}

func (r *bitReader) left() int { return len(r.b)*8 - r.pos }

func (r *bitReader) read(n int) (uint32, bool) {
	if n > r.left() {
		return 0, false
	}
	var v uint32
	for i := range n {
		bit := r.b[(r.pos+i)/8] >> ((r.pos + i) % 8) & 1
		v |= uint32(bit) << i
	}
	r.pos += n
	return v, true
}

func ilog(x uint32) int {
	n := 0
	for ; x > 0; x >>= 1 {
		n++
	}
	return n
}

// lookup1Values is the largest r with r^dims <= entries (Vorbis I §9.2.3).
func lookup1Values(entries, dims uint32) uint32 {
	r := uint32(math.Floor(math.Pow(float64(entries), 1/float64(dims))))
	pow := func(b uint32) float64 { return math.Pow(float64(b), float64(dims)) }
	for r > 0 && pow(r) > float64(entries) {
		r--
	}
	for pow(r+1) <= float64(entries) {
		r++
	}
	return r
}

// checkCodebooks walks the codebooks of a setup header (Vorbis I §3.2.1)
// and refuses sizes that would make the decoder allocate without bound.
func checkCodebooks(b []byte) error {
	bad := func(i int, what string) error {
		return fmt.Errorf("%w: codebook %d: %s", ErrCorrupt, i, what)
	}
	r := &bitReader{b: b}
	count, ok := r.read(8)
	if !ok {
		return bad(0, "truncated")
	}
	cost := 0
	for i := range int(count) + 1 {
		sync, _ := r.read(24)
		dims, _ := r.read(16)
		entries, ok := r.read(24)
		if !ok || sync != 0x564342 {
			return bad(i, "no sync pattern")
		}
		if entries < 2 || dims < 1 {
			return bad(i, fmt.Sprintf("%d entries of %d dimensions", entries, dims))
		}
		if cost += int(entries) * (int(dims) + 3); cost > vorbisMaxBookCost {
			return bad(i, fmt.Sprintf("%d entries of %d dimensions is too large", entries, dims))
		}
		ordered, _ := r.read(1)
		if ordered == 0 {
			sparse, _ := r.read(1)
			for range entries {
				used := uint32(1)
				if sparse == 1 {
					used, ok = r.read(1)
				}
				if used == 1 {
					_, ok = r.read(5)
				}
				if !ok {
					return bad(i, "truncated lengths")
				}
			}
		} else {
			length, _ := r.read(5)
			for cur := uint32(0); cur < entries; length++ {
				num, ok := r.read(ilog(entries - cur))
				if !ok || length >= 32 || num > entries-cur {
					return bad(i, "bad ordered lengths")
				}
				cur += num
			}
		}
		lookup, ok := r.read(4)
		switch {
		case !ok || lookup > 2:
			return bad(i, "bad lookup type")
		case lookup == 0:
			continue
		}
		r.read(32)
		r.read(32)
		bits, _ := r.read(4)
		r.read(1)
		values := uint64(entries) * uint64(dims)
		if lookup == 1 {
			values = uint64(lookup1Values(entries, dims))
		}
		need := values * uint64(bits+1)
		if need > uint64(r.left()) {
			return bad(i, "truncated values")
		}
		r.pos += int(need)
	}
	return nil
}

// checkOggTags checks the comment packet of an Ogg Vorbis or Opus file
// before a tag reader parses it.
func checkOggTags(src *source) error {
	hs, err := headerPackets(bufio.NewReaderSize(io.NewSectionReader(src, 0, src.size), 32<<10), 2)
	if err != nil {
		return err
	}
	// The tag reader takes the first packet that looks like a comment.
	for _, c := range hs {
		switch {
		case bytes.HasPrefix(c, []byte("\x03vorbis")):
			return checkVorbisComment(c[7:])
		case bytes.HasPrefix(c, []byte("OpusTags")):
			return checkVorbisComment(c[8:])
		}
	}
	return fmt.Errorf("%w: no comment header", ErrCorrupt)
}
