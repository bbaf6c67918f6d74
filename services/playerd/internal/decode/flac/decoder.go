// Package flac decodes FLAC (RFC 9639) from a file: bit-exact samples,
// sample-exact seeking through the SEEKTABLE or a search for frames, and
// damaged frames replaced by silence of their length.
package flac

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrFormat reports input that is not a FLAC stream this package decodes.
var ErrFormat = errors.New("flac: not a FLAC stream")

// StreamInfo is the STREAMINFO block (RFC 9639, section 8.2).
type StreamInfo struct {
	MinBlock, MaxBlock int
	MinFrame, MaxFrame int
	SampleRate         int
	Channels           int
	BitsPerSample      int
	TotalSamples       uint64 // 0: unknown
	MD5                [16]byte
}

// seekPoint is a SEEKTABLE entry.
type seekPoint struct {
	sample uint64
	offset int64 // from the first frame
}

// Decoder decodes the audio frames of a FLAC file.
type Decoder struct {
	r     io.ReaderAt
	size  int64
	info  StreamInfo
	audio int64 // offset of the first frame
	seek  []seekPoint

	buf    []byte // a window of the file at bufOff
	bufOff int64
	need   int // bytes a frame may take, for the window

	f       frameDecoder
	out     [8][]int32
	off     int64  // file offset of the next frame
	pos     uint64 // samples given out
	skip    int    // samples to drop from the next frame (after a seek)
	silence uint64 // silence still owed for damage
	damaged int
}

const (
	blockStreamInfo = 0
	blockSeekTable  = 3
	minWindow       = 256 << 10
)

// NewFile reads the metadata of the FLAC stream in r, which may start with
// an ID3v2 tag.
func NewFile(r io.ReaderAt, size int64) (*Decoder, error) {
	d := &Decoder{r: r, size: size}
	off, err := skipID3(r)
	if err != nil {
		return nil, err
	}
	var sig [4]byte
	if _, err := r.ReadAt(sig[:], off); err != nil || string(sig[:]) != "fLaC" {
		return nil, fmt.Errorf("%w: no signature", ErrFormat)
	}
	off += 4
	for first := true; ; first = false {
		var h [4]byte
		if _, err := r.ReadAt(h[:], off); err != nil {
			return nil, fmt.Errorf("%w: truncated metadata", ErrFormat)
		}
		typ, n := h[0]&0x7F, int64(h[1])<<16|int64(h[2])<<8|int64(h[3])
		off += 4
		if typ == 127 || off+n > size || first != (typ == blockStreamInfo) {
			return nil, fmt.Errorf("%w: metadata block %d of %d bytes", ErrFormat, typ, n)
		}
		switch {
		case typ == blockStreamInfo:
			if n != 34 {
				return nil, fmt.Errorf("%w: STREAMINFO of %d bytes", ErrFormat, n)
			}
			var b [34]byte
			if _, err := r.ReadAt(b[:], off); err != nil {
				return nil, fmt.Errorf("flac: %w", err)
			}
			if err := d.info.parse(b[:]); err != nil {
				return nil, err
			}
		case typ == blockSeekTable && d.seek == nil && n%18 == 0 && n <= 1<<20:
			b := make([]byte, n)
			if _, err := r.ReadAt(b, off); err != nil {
				return nil, fmt.Errorf("flac: %w", err)
			}
			d.seek = parseSeekTable(b)
		}
		off += n
		if h[0]&0x80 != 0 {
			break
		}
	}
	d.audio, d.off = off, off
	in := &d.info
	// A verbatim frame is the largest an encoder writes: every sample in
	// full, one more bit for a side channel, and the headers.
	d.need = in.MaxBlock*in.Channels*(in.BitsPerSample+1)/8 + 8*in.Channels + 32
	if in.MaxFrame > 0 && in.MaxFrame < d.need {
		d.need = in.MaxFrame
	}
	d.buf = make([]byte, 0, max(minWindow, 2*d.need))
	d.f.grow(in.MaxBlock, in.Channels)
	return d, nil
}

func (in *StreamInfo) parse(b []byte) error {
	in.MinBlock = int(binary.BigEndian.Uint16(b[0:]))
	in.MaxBlock = int(binary.BigEndian.Uint16(b[2:]))
	in.MinFrame = int(b[4])<<16 | int(b[5])<<8 | int(b[6])
	in.MaxFrame = int(b[7])<<16 | int(b[8])<<8 | int(b[9])
	in.SampleRate = int(b[10])<<12 | int(b[11])<<4 | int(b[12])>>4
	in.Channels = int(b[12]>>1&7) + 1
	in.BitsPerSample = (int(b[12]&1)<<4 | int(b[13]>>4)) + 1
	in.TotalSamples = uint64(b[13]&15)<<32 | uint64(binary.BigEndian.Uint32(b[14:]))
	copy(in.MD5[:], b[18:34])
	if in.MinBlock < 16 || in.MaxBlock < in.MinBlock || in.SampleRate < 1 || in.SampleRate > 655350 || in.BitsPerSample < 4 {
		return fmt.Errorf("%w: STREAMINFO block %d..%d, %d Hz, %d bits", ErrFormat, in.MinBlock, in.MaxBlock, in.SampleRate, in.BitsPerSample)
	}
	return nil
}

func parseSeekTable(b []byte) []seekPoint {
	var pts []seekPoint
	for ; len(b) >= 18; b = b[18:] {
		s, o := binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])
		if s == ^uint64(0) || o > 1<<40 {
			continue // a placeholder
		}
		if n := len(pts); n > 0 && (s <= pts[n-1].sample || int64(o) < pts[n-1].offset) {
			continue
		}
		pts = append(pts, seekPoint{s, int64(o)})
	}
	return pts
}

// skipID3 returns the length of an ID3v2 tag at the start, which FLAC files
// sometimes carry although the format has no place for one.
func skipID3(r io.ReaderAt) (int64, error) {
	var h [10]byte
	if n, _ := r.ReadAt(h[:], 0); n < 10 || string(h[:3]) != "ID3" {
		return 0, nil
	}
	for _, b := range h[6:] {
		if b&0x80 != 0 {
			return 0, fmt.Errorf("%w: ID3v2 size", ErrFormat)
		}
	}
	n := int64(h[6])<<21 | int64(h[7])<<14 | int64(h[8])<<7 | int64(h[9]) + 10
	if h[5]&0x10 != 0 {
		n += 10
	}
	return n, nil
}

// Info returns the STREAMINFO block.
func (d *Decoder) Info() StreamInfo { return d.info }

// Position is the number of samples per channel given out so far.
func (d *Decoder) Position() uint64 { return d.pos }

// Damaged counts the stretches of damage replaced by silence: a frame, or
// frames lost together with their headers.
func (d *Decoder) Damaged() int { return d.damaged }

// window returns the file from off, at least need bytes of it unless the
// file ends first.
func (d *Decoder) window(off int64, need int) ([]byte, error) {
	if off >= d.bufOff && off+int64(need) <= d.bufOff+int64(len(d.buf)) {
		return d.buf[off-d.bufOff:], nil
	}
	if off >= d.size {
		return nil, nil
	}
	if need > cap(d.buf) {
		d.buf = make([]byte, 0, 2*need)
	}
	keep := 0
	if off >= d.bufOff && off < d.bufOff+int64(len(d.buf)) {
		keep = copy(d.buf[:cap(d.buf)], d.buf[off-d.bufOff:])
	}
	want := min(int64(cap(d.buf)), d.size-off)
	b := d.buf[:want]
	n, err := d.r.ReadAt(b[keep:], off+int64(keep))
	if err != nil && !errors.Is(err, io.EOF) {
		d.buf, d.bufOff = d.buf[:0], 0
		return nil, fmt.Errorf("flac: %w", err)
	}
	d.buf, d.bufOff = b[:keep+n], off
	return d.buf, nil
}

// frameAt decodes the frame at off; ok is false when no valid header is
// there.
func (d *Decoder) frameAt(off int64) (h header, n int, ok bool, err error) {
	need := d.need
	for {
		b, err := d.window(off, need)
		if err != nil {
			return h, 0, false, err
		}
		h, ok = parseHeader(b, &d.info, d.f.lax)
		if !ok || !d.fits(&h) {
			return h, 0, false, nil
		}
		n, err = d.f.decode(b, &h)
		if err == nil {
			return h, n, true, nil
		}
		// A frame larger than the window (a Rice code worse than verbatim)
		// gets a larger one, up to what a 24-bit length field allows.
		if len(b) < need || need >= 1<<24 {
			return h, 0, true, err
		}
		need *= 2
	}
}

// fits refuses a header that contradicts STREAMINFO.
func (d *Decoder) fits(h *header) bool {
	return h.channels == d.info.Channels && h.bps == d.info.BitsPerSample && h.blockSize <= d.info.MaxBlock
}

// resync finds the next frame in [off, limit) that decodes and checks.
func (d *Decoder) resync(off, limit int64) (int64, header, bool, error) {
	limit = min(limit, d.size)
	for off < limit {
		b, err := d.window(off, 2)
		if err != nil {
			return 0, header{}, false, err
		}
		i := 0
		for ; i+1 < len(b); i++ {
			if b[i] == 0xFF && b[i+1]&0xFE == 0xF8 {
				break
			}
		}
		if i+1 >= len(b) {
			off += int64(max(i, 1))
			continue
		}
		off += int64(i)
		h, _, ok, err := d.frameAt(off)
		if err == nil && ok {
			return off, h, true, nil
		}
		if err != nil && !errors.Is(err, errFrame) {
			return 0, header{}, false, err
		}
		off++
	}
	return 0, header{}, false, nil
}

// Frame returns the next samples, one slice per channel, valid until the
// next call; io.EOF at the end. A damaged frame comes back as silence of
// its length.
func (d *Decoder) Frame() ([][]int32, error) {
	for {
		if total := d.info.TotalSamples; total > 0 && d.pos >= total {
			return nil, io.EOF
		}
		if d.silence > 0 {
			return d.silent(), nil
		}
		if d.off >= d.size {
			return nil, io.EOF
		}
		h, n, ok, err := d.frameAt(d.off)
		if err != nil && !errors.Is(err, errFrame) {
			return nil, err
		}
		if ok && err == nil {
			d.off += int64(n)
			return d.give(h.blockSize), nil
		}
		d.damaged++
		next, h2, found, rerr := d.resync(d.off+1, d.size)
		if rerr != nil {
			return nil, rerr
		}
		if ok {
			// The header held: its block is silence.
			d.silence = uint64(h.blockSize)
		} else if found {
			// The header is lost too: silence up to the next frame's first
			// sample, if that is plausible.
			if s, at := h2.firstSample(&d.info), d.pos-uint64(d.skip); s > at && s-at <= 64*uint64(d.info.MaxBlock) {
				d.silence = s - at
			}
		}
		if !found {
			d.off = d.size
		} else {
			d.off = next
		}
	}
}

// give hands out the frame just decoded, less what a seek skips.
func (d *Decoder) give(n int) [][]int32 {
	k := min(d.skip, n)
	d.skip -= k
	if total := d.info.TotalSamples; total > 0 && d.pos+uint64(n-k) > total {
		n = k + int(total-d.pos)
	}
	out := d.out[:d.info.Channels]
	for ch := range out {
		out[ch] = d.f.pcm[ch][k:n]
	}
	d.pos += uint64(n - k)
	return out
}

func (d *Decoder) silent() [][]int32 {
	n := int(min(d.silence, uint64(d.info.MaxBlock)))
	d.silence -= uint64(n)
	for ch := range d.info.Channels {
		clear(d.f.pcm[ch][:n])
	}
	return d.give(n)
}

// Seek makes the next Frame start at sample s exactly.
func (d *Decoder) Seek(s uint64) error {
	if total := d.info.TotalSamples; total > 0 && s >= total {
		d.pos, d.skip, d.silence, d.off = total, 0, 0, d.size
		return nil
	}
	start, first, err := d.seekStart(s)
	if err != nil {
		return err
	}
	d.off, d.pos, d.silence, d.skip = start, first, 0, 0
	// Decode forward to the frame holding s.
	for {
		h, n, ok, err := d.frameAt(d.off)
		if err != nil && !errors.Is(err, errFrame) {
			return err
		}
		if !ok || err != nil {
			break // damage: Frame resyncs from here
		}
		if d.pos+uint64(h.blockSize) > s {
			break
		}
		d.off += int64(n)
		d.pos += uint64(h.blockSize)
	}
	if s > d.pos {
		d.skip = int(s - d.pos)
	}
	d.pos = s
	return nil
}

// seekStart finds a frame at or before sample s: from the SEEKTABLE, else
// by bisection over the file.
func (d *Decoder) seekStart(s uint64) (int64, uint64, error) {
	lo, loSample := d.audio, uint64(0)
	for _, p := range d.seek {
		if p.sample > s {
			break
		}
		off := d.audio + p.offset
		if b, err := d.window(off, 32); err == nil {
			if h, ok := parseHeader(b, &d.info, d.f.lax); ok && h.firstSample(&d.info) == p.sample {
				lo, loSample = off, p.sample
			}
		}
	}
	hi := d.size
	span := int64(max(d.need, 64<<10))
	for range 64 {
		if hi-lo <= span {
			break
		}
		mid := lo + (hi-lo)/2
		off, h, found, err := d.resync(mid, hi)
		if err != nil {
			return 0, 0, err
		}
		if !found || off >= hi {
			hi = mid
			continue
		}
		if first := h.firstSample(&d.info); first <= s && first >= loSample {
			lo, loSample = off, first
		} else {
			hi = mid
		}
	}
	return lo, loSample, nil
}

// Length is the stream's length in samples per channel: STREAMINFO's count,
// or when the encoder left it unknown, the end of the last frame.
func (d *Decoder) Length() (uint64, error) {
	if d.info.TotalSamples > 0 {
		return d.info.TotalSamples, nil
	}
	for back := int64(max(2*d.need, 64<<10)); ; back *= 2 {
		off := max(d.audio, d.size-back)
		end, found := uint64(0), false
		for {
			next, h, ok, err := d.resync(off, d.size)
			if err != nil {
				return 0, err
			}
			if !ok {
				break
			}
			_, n, _, _ := d.frameAt(next)
			end, found = h.firstSample(&d.info)+uint64(h.blockSize), true
			off = next + int64(max(n, 1))
		}
		if found || d.size-back <= d.audio {
			return end, nil
		}
	}
}
