// Package mp3 decodes MPEG-1, MPEG-2 and MPEG-2.5 Audio Layer III, written
// from ISO/IEC 11172-3 and 13818-3: every stereo mode, long, short and
// mixed blocks, the bit reservoir, CRC-protected frames. Output is float32
// with full scale at ±1. Files play gapless: the encoder delay and padding
// a LAME header names are trimmed, so the output is as long as what was
// encoded. Damaged frames are skipped and the stream resynchronised;
// files seek to the sample, streams start at any frame.
//
// The package stands alone; it allocates its buffers when a decoder is
// made and nothing per frame.
//
// MPEG-2.5 (8, 11.025 and 12 kHz) is no ISO standard but Fraunhofer's
// extension of 13818-3; its header bit, sampling frequencies and
// scalefactor bands follow mpg123, which was consulted for that
// behaviour, as it was for a few points the standards leave open (each
// noted where it applies: intensity positions in MPEG-2, the bands of
// mixed blocks, the regions of switched granules). The gapless figures
// follow LAME's header (inspect.go). No code of theirs is used.
package mp3

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrNotSeekable reports a seek on a stream.
var ErrNotSeekable = errors.New("mp3: a stream cannot seek")

// Decoder decodes one MP3 file or stream. It is not safe for concurrent use.
type Decoder struct {
	in input

	sig      uint32 // the stream's header bits under headerMask
	locked   bool   // the last frame was where the one before it said
	rate     int
	channels int
	spf      int64 // samples per frame
	lsf      bool

	audio    int64 // offset of the first audio frame
	cbr      bool  // frame n starts within a byte of audio + n·perFrame
	perFrame float64
	delay    int64 // decoded samples dropped at the start
	length   int64 // samples the stream plays, -1 for a stream of unknown length

	frame int64 // number of the next audio frame
	pos   int64 // samples delivered, after the delay
	done  bool
	err   error

	l3        layer3
	pcm       [2][1152]float32
	pcmFrom   int
	pcmTo     int
	frameChan int // channels of the frame in pcm

	index frameIndex
}

// NewFile opens the MP3 file r of size bytes: its length is known, from
// its headers (a constant bitrate's from its size, a variable bitrate
// without a header's by reading every frame header), and it seeks.
func NewFile(r io.ReaderAt, size int64) (*Decoder, error) {
	info, err := Inspect(r, size)
	if err != nil {
		return nil, err
	}
	d := &Decoder{
		in:     input{ra: r, end: info.end, buf: make([]byte, fileBuffer)},
		audio:  info.audio,
		delay:  info.delay,
		length: info.Samples,
	}
	d.setFormat(info.header)
	d.in.seek(info.audio)
	d.index.init(info.audio)
	if info.cbr {
		// 1152 or 576 samples of bitrate/rate bits each, in bytes.
		d.cbr = true
		d.perFrame = float64(d.spf) / 8 * float64(info.header.bitrate) / float64(d.rate)
	}
	if d.length < 0 {
		// A variable bitrate without a header: count the frames (which
		// indexes them for seeking too).
		n, err := d.scanTo(-1)
		if err != nil {
			return nil, err
		}
		d.length = max(0, n*d.spf-d.delay)
		d.in.seek(info.audio)
		d.frame = 0
	}
	return d, nil
}

// NewStream starts decoding r, a stream read once: a radio station or a
// file arriving over the network. It skips an ID3v2 tag at the start and
// anything before the first frame, so a stream may be joined anywhere,
// and decodes until r ends.
func NewStream(r io.Reader) (*Decoder, error) {
	d := &Decoder{in: input{r: r, end: -1, buf: make([]byte, streamBuffer)}, length: -1}
	if err := d.skipLeadingTags(); err != nil {
		return nil, err
	}
	h, frame, err := d.next()
	if err != nil {
		if err == io.EOF {
			err = ErrNoFrames
		}
		return nil, err
	}
	d.setFormat(h)
	// A file arriving whole (a podcast episode) starts with the header of
	// a file: its delay is trimmed. Its length is not trusted: a station
	// may send one file's frames, Info frame and all, again and again.
	info := Info{header: h, frames: -1, end: -1}
	if info.readXing(frame, false) || info.readVBRI(frame, false) {
		d.delay = info.delay
		return d, nil
	}
	// An audio frame: decode it again as the first.
	d.in.unread(h.size)
	return d, nil
}

const (
	fileBuffer   = 64 << 10 // a file is read a few seconds at a time
	streamBuffer = 4 << 10  // a stream a few frames at a time
)

func (d *Decoder) setFormat(h header) {
	d.sig = headerBits(h)
	d.rate = h.rate()
	d.channels = h.channels()
	d.spf = int64(h.samples())
	d.lsf = h.lsf
}

// headerBits is the header mask value every frame of a stream like h has.
func headerBits(h header) uint32 { return h.bits & headerMask }

// SampleRate is the stream's sampling frequency in Hz.
func (d *Decoder) SampleRate() int { return d.rate }

// Channels is 1 or 2: the first frame's.
func (d *Decoder) Channels() int { return d.channels }

// Length is the number of samples per channel the file plays, or -1 for a
// stream of unknown length.
func (d *Decoder) Length() int64 { return d.length }

// Position is the number of samples per channel read so far (or sought to).
func (d *Decoder) Position() int64 { return d.pos }

// Buffered is the number of bytes read from a stream but not yet decoded.
func (d *Decoder) Buffered() int { return d.in.hi - d.in.lo }

// Read decodes into dst, interleaved by channel (left, right for stereo),
// and returns the number of values written: a whole number of samples
// for every channel. At the end of the stream it returns io.EOF; a read
// error of the input is returned as it is.
func (d *Decoder) Read(dst []float32) (int, error) {
	nch := d.channels
	n := 0
	for n+nch <= len(dst) {
		if d.pcmFrom >= d.pcmTo {
			if d.done || d.err != nil {
				break
			}
			d.decodeNext()
			continue
		}
		k := min(d.pcmTo-d.pcmFrom, (len(dst)-n)/nch)
		from := d.pcmFrom
		switch {
		case nch == 1 && d.frameChan == 1:
			copy(dst[n:n+k], d.pcm[0][from:from+k])
		case nch == 1:
			l, r := d.pcm[0][from:from+k], d.pcm[1][from:from+k]
			out := dst[n : n+k]
			for i := range out {
				out[i] = (l[i] + r[i]) * 0.5
			}
		default:
			l, r := d.pcm[0][from:from+k], d.pcm[1][from:from+k]
			if d.frameChan == 1 {
				r = l
			}
			out := dst[n : n+2*k]
			for i := range l {
				out[2*i], out[2*i+1] = l[i], r[i]
			}
		}
		d.pcmFrom += k
		d.pos += int64(k)
		n += k * nch
	}
	if n > 0 {
		return n, nil
	}
	if d.err != nil {
		return 0, d.err
	}
	return 0, io.EOF
}

// decodeNext decodes the next frame into pcm, trimmed to the samples the
// stream plays.
func (d *Decoder) decodeNext() {
	h, frame, err := d.next()
	if err != nil {
		if err != io.EOF {
			d.err = err
		}
		d.done = true
		return
	}
	n := d.frame
	d.frame++
	d.l3.decodeFrame(h, frame, &d.pcm)
	d.frameChan = h.channels()
	d.trim(n, 0)
}

// trim sets the part of frame n in pcm that plays: after the delay, before
// the end, and from skip on.
func (d *Decoder) trim(n int64, skip int64) {
	start := n * d.spf
	from := max(d.delay-start, skip, 0)
	to := d.spf
	if d.length >= 0 {
		to = min(to, d.delay+d.length-start)
		if to <= 0 {
			d.done = true
		}
	}
	from = min(from, d.spf)
	d.pcmFrom, d.pcmTo = int(from), int(max(from, to))
}

// next returns the next frame: where the last one ended, or, after damage,
// the next place where a frame header is followed by another.
func (d *Decoder) next() (header, []byte, error) {
	in := &d.in
	for {
		if n := in.ensure(4); n < 4 {
			in.skip(int64(n)) // the last bytes: too few for a frame
			return header{}, nil, in.fail()
		}
		b := in.buf[in.lo:in.hi]
		v := binary.BigEndian.Uint32(b)
		h, ok := parseHeader(v)
		if ok && (d.sig == 0 || v&headerMask == d.sig) {
			avail := in.ensure(h.size + 4)
			b = in.buf[in.lo:in.hi]
			switch {
			case avail >= h.size+4 && !d.locked:
				w := binary.BigEndian.Uint32(b[h.size:])
				if _, ok := parseHeader(w); ok && w&headerMask == v&headerMask {
					return d.accept(h)
				}
			case avail >= h.size:
				// Where the last frame said, or the last frame of the input.
				if d.locked || avail == h.size {
					return d.accept(h)
				}
			}
		}
		if d.locked {
			// Frames were lost, or junk came between them: the reservoir
			// may lack bytes the next frames' main data begins in. Empty,
			// it makes them silent instead of noise.
			d.l3.resLen = 0
		}
		d.locked = false
		// Not a frame: a tag between frames, or damage. Look for the next
		// sync byte.
		if n, ok := id3Size(b); ok {
			in.skip(n)
			continue
		}
		if i := bytes.IndexByte(b[1:], 0xff); i >= 0 {
			in.skip(int64(i + 1))
		} else {
			in.skip(int64(len(b)))
		}
	}
}

func (d *Decoder) accept(h header) (header, []byte, error) {
	in := &d.in
	frame := in.buf[in.lo : in.lo+h.size]
	if d.in.ra != nil {
		d.index.record(d.frame, in.off, in.off+int64(h.size))
	}
	in.skip(int64(h.size))
	d.locked = true
	return h, frame, nil
}

// skipLeadingTags skips the ID3v2 tags at the start of a stream.
func (d *Decoder) skipLeadingTags() error {
	for {
		if d.in.ensure(10) < 10 {
			return nil
		}
		n, ok := id3Size(d.in.buf[d.in.lo:d.in.hi])
		if !ok {
			return nil
		}
		d.in.skip(n)
	}
}

// SeekSample moves to sample p of a file (0 <= p <= Length). The frames the
// target's bit reservoir reaches back into are read again, and the two
// granules before it decoded, so the first samples after a seek are those
// of playing through.
func (d *Decoder) SeekSample(p int64) error {
	if d.in.ra == nil {
		return ErrNotSeekable
	}
	if p < 0 || p > d.length {
		return fmt.Errorf("mp3: seek to %d outside 0..%d", p, d.length)
	}
	d.err, d.done = nil, false
	q := p + d.delay
	t := q / d.spf
	warm := int64(1) // granules of the frame before: two for MPEG-1
	if d.lsf {
		warm = 2
	}
	f0 := max(0, t-warm)
	// The frames whose main data the first decoded frame may begin in.
	start, err := d.reservoirStart(f0)
	if err != nil {
		return err
	}
	d.l3.reset()
	d.locked = false
	if err := d.seekFrame(start); err != nil {
		return err
	}
	for d.frame < t {
		h, frame, err := d.next()
		if err != nil {
			return d.atEnd(p, err)
		}
		if d.frame < f0 {
			d.l3.feed(h, frame)
		} else {
			d.l3.decodeFrame(h, frame, &d.pcm)
		}
		d.frame++
	}
	d.pos = p
	d.pcmFrom, d.pcmTo = 0, 0
	h, frame, err := d.next()
	if err != nil {
		return d.atEnd(p, err)
	}
	d.l3.decodeFrame(h, frame, &d.pcm)
	d.frameChan = h.channels()
	d.trim(t, q-t*d.spf)
	d.frame++
	return nil
}

// atEnd leaves a seek that ran out of frames at the end of the stream.
func (d *Decoder) atEnd(p int64, err error) error {
	if err != io.EOF {
		d.err = err
		return err
	}
	d.pos, d.done = p, true
	d.pcmFrom, d.pcmTo = 0, 0
	return nil
}

// reservoirStart is the frame to start reading at for frame f to have its
// whole bit reservoir: the frames before f whose main data add up to the
// largest reservoir, looked up in the frames read on the way to f.
func (d *Decoder) reservoirStart(f int64) (int64, error) {
	most := 511
	if d.lsf {
		most = 255
	}
	if f == 0 {
		return 0, nil
	}
	// Start early enough that the frames ahead of f are all seen: for a
	// constant bitrate as many as its frames' main data needs.
	back := int64(reservoirFrames)
	if d.cbr {
		if per := int64(d.perFrame) - 4 - 2 - 32; per > 0 {
			back = min(back, int64(most)/per+2)
		}
	}
	from := max(0, f-back)
	if err := d.seekFrame(from); err != nil {
		return 0, err
	}
	var ring [reservoirFrames]int
	for d.frame < f {
		h, _, err := d.next()
		if err != nil {
			if err == io.EOF {
				break
			}
			return 0, err
		}
		ring[d.frame%reservoirFrames] = h.mainData()
		d.frame++
	}
	start, sum := d.frame, 0
	for start > from && sum < most {
		start--
		sum += ring[start%reservoirFrames]
	}
	return start, nil
}

// reservoirFrames is how many frames the reservoir can span: 255 bytes at
// the three bytes of main data of the smallest MPEG-2 frame.
const reservoirFrames = 96

// seekFrame positions the input at audio frame f, from the nearest frame
// the index knows, reading frame headers from there; in a file of constant
// bitrate, straight from where frame f starts.
func (d *Decoder) seekFrame(f int64) error {
	n, off := d.index.before(f)
	locked := n < d.index.known
	if d.cbr && f-n > cbrJump {
		if at, ok := d.cbrOffset(f); ok {
			n, off, locked = f, at, true
		}
	}
	d.in.seek(off)
	d.frame = n
	d.locked = locked
	for d.frame < f {
		if _, _, err := d.next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		d.frame++
	}
	return nil
}

// cbrJump is how far past the known frames a seek in a file of constant
// bitrate computes where its frame starts rather than reading there.
const cbrJump = 64

// cbrOffset is where frame f of a constant bitrate starts: the padding of
// each frame keeps the stream within a byte of perFrame bytes a frame, so
// a header that the next one confirms within two bytes of the estimate is
// frame f. Anything else (damage, a file padded otherwise) is left to the
// walk.
func (d *Decoder) cbrOffset(f int64) (int64, bool) {
	est := d.audio + int64(float64(f)*d.perFrame+0.5)
	var b [8]byte
	for _, delta := range []int64{0, -1, 1, -2, 2} {
		at := est + delta
		if at < d.audio || at+4 > d.in.end {
			continue
		}
		if n, _ := d.in.ra.ReadAt(b[:4], at); n < 4 {
			continue
		}
		v := binary.BigEndian.Uint32(b[:4])
		h, ok := parseHeader(v)
		if !ok || v&headerMask != d.sig {
			continue
		}
		next := at + int64(h.size)
		if next == d.in.end {
			return at, true
		}
		if n, _ := d.in.ra.ReadAt(b[4:], next); n < 4 {
			continue
		}
		if w := binary.BigEndian.Uint32(b[4:]); w&headerMask == d.sig {
			if _, ok := parseHeader(w); ok {
				return at, true
			}
		}
	}
	return 0, false
}

// scanTo reads frame headers from the current frame to frame f (all of
// them when f < 0) and returns the number of the frame reached.
func (d *Decoder) scanTo(f int64) (int64, error) {
	for f < 0 || d.frame < f {
		if _, _, err := d.next(); err != nil {
			if err == io.EOF {
				break
			}
			return d.frame, err
		}
		d.frame++
	}
	return d.frame, nil
}

// Err reports a read error that ended decoding.
func (d *Decoder) Err() error { return d.err }

// ReadStereo decodes into dst as left and right pairs, a mono stream's
// sample in both, and returns the number of pairs written. It ends as Read
// does.
func (d *Decoder) ReadStereo(dst [][2]float64) (int, error) {
	n := 0
	for n < len(dst) {
		if d.pcmFrom >= d.pcmTo {
			if d.done || d.err != nil {
				break
			}
			d.decodeNext()
			continue
		}
		k := min(d.pcmTo-d.pcmFrom, len(dst)-n)
		from := d.pcmFrom
		l, r := d.pcm[0][from:from+k], d.pcm[1][from:from+k]
		out := dst[n : n+k]
		switch {
		case d.frameChan == 1:
			for i := range out {
				v := float64(l[i])
				out[i] = [2]float64{v, v}
			}
		case d.channels == 1:
			for i := range out {
				v := float64((l[i] + r[i]) * 0.5)
				out[i] = [2]float64{v, v}
			}
		default:
			for i := range out {
				out[i] = [2]float64{float64(l[i]), float64(r[i])}
			}
		}
		d.pcmFrom += k
		d.pos += int64(k)
		n += k
	}
	if n > 0 {
		return n, nil
	}
	if d.err != nil {
		return 0, d.err
	}
	return 0, io.EOF
}
