package decode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/decode/aac"
	"github.com/storybox/storybox/services/playerd/internal/decode/mp4"
)

// A station in AAC sends ADTS frames, joined anywhere; a podcast episode in
// M4A is an MP4 file read from its first byte. aacLive decodes both: ADTS
// by finding the frames' sync, MP4 by reading the moov box ahead of the
// audio (a file that keeps it at the end cannot be streamed) and then the
// samples in the order they lie in the file.

const (
	// liveMaxBadFrames ends a stream after this many frames in a row that
	// do not decode: a station sending something else than it says.
	liveMaxBadFrames = 8
	// liveMaxHead bounds what is kept of an MP4 stream before its audio:
	// the tracks in the moov box, an hour of audio's index being about
	// 1 MB. Tags and cover art in the moov box are not kept.
	liveMaxHead = 32 << 20
	// liveMaxBoxes bounds the boxes an MP4 stream may have before its
	// audio, at the top and in the moov box. A real file has a handful:
	// ftyp, free, moov, and in it mvhd, a track or two, udta.
	liveMaxBoxes = 64
	// liveEnd is where an MP4 stream is taken to end, as far as its boxes'
	// sizes and offsets go: far beyond any real one, and far enough below
	// the largest int64 that no sum of two of them overflows.
	liveEnd = math.MaxInt64 / 2
)

type aacLive struct {
	br    *bufio.Reader
	dec   *aac.Decoder
	cfg   aac.Config
	frame []byte
	pcm   [][]float32
	have  int
	used  int
	bad   int
	// MP4: the samples in file order, where the stream is, and the span
	// that plays.
	mp4  *mp4.Cursor
	next int
	n    int
	pos  int64
	skip int
	left int // samples still to play; -1 for a station
	err  error
	eof  bool
	// boxes counts the MP4 boxes read before the audio, kept the bytes
	// held of them.
	boxes int
	kept  int64
}

// openAACLive starts an ADTS or MP4 stream at the reader's position.
func openAACLive(br *bufio.Reader, isMP4 bool) (*aacLive, error) {
	a := &aacLive{br: br, frame: make([]byte, maxFrame), left: -1}
	if isMP4 {
		return a, a.openMP4()
	}
	if err := a.syncADTS(); err != nil {
		return nil, err
	}
	h, _ := br.Peek(aac.ADTSHeaderSize)
	first, err := aac.ParseADTS(h)
	if err != nil {
		return nil, errAAC(err)
	}
	a.cfg = first.Config
	if a.dec, err = aac.NewDecoder(a.cfg); err != nil {
		return nil, errAAC(err)
	}
	return a, nil
}

// syncADTS skips to the first of two ADTS headers a frame apart, within
// the bytes a reader buffers.
func (a *aacLive) syncADTS() error {
	buf, _ := a.br.Peek(a.br.Size())
	i := findADTS(buf)
	if i < 0 {
		return fmt.Errorf("%w: no ADTS frames in the first %d bytes", ErrCorrupt, len(buf))
	}
	_, err := a.br.Discard(i)
	return err
}

// findADTS is where the first of two ADTS headers a frame apart starts in
// buf, or -1: a stream joined mid-frame has junk before its first frame.
func findADTS(buf []byte) int {
	for i := 0; i+aac.ADTSHeaderSize <= len(buf); i++ {
		h, err := aac.ParseADTS(buf[i:])
		if err != nil {
			continue
		}
		j := i + h.FrameLength
		if j+aac.ADTSHeaderSize > len(buf) {
			continue
		}
		if g, err := aac.ParseADTS(buf[j:]); err == nil && g.Config == h.Config {
			return i
		}
	}
	return -1
}

func (a *aacLive) stream(out [][2]float64) (int, bool) {
	n := 0
	for n < len(out) && a.err == nil && !a.eof && a.left != 0 {
		if a.used == a.have {
			a.decodeNext()
			continue
		}
		if a.skip > 0 {
			d := min(a.skip, a.have-a.used)
			a.skip -= d
			a.used += d
			continue
		}
		k := min(len(out)-n, a.have-a.used)
		if a.left > 0 {
			k = min(k, a.left)
			a.left -= k
		}
		copyPCM(out[n:n+k], a.pcm, a.used)
		n += k
		a.used += k
	}
	return n, a.err == nil && !a.eof && a.left != 0 || n > 0
}

// decodeNext reads and decodes one frame. A frame that does not decode is
// dropped, a few in a row end the stream.
func (a *aacLive) decodeNext() {
	var p []byte
	var err error
	if a.mp4 != nil {
		p, err = a.sampleMP4()
	} else {
		p, err = a.frameADTS()
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			a.eof = true
		} else {
			a.err = err
		}
		return
	}
	if a.pcm, err = a.dec.Decode(p); err != nil {
		a.dec.Reset()
		if a.bad++; a.bad >= liveMaxBadFrames {
			a.err = fmt.Errorf("%d frames in a row do not decode: %w", a.bad, errAAC(err))
		}
		return
	}
	a.bad = 0
	a.have, a.used = aac.FrameSamples, 0
}

// frameADTS reads the next ADTS frame, finding the sync again after bytes
// that are not one.
func (a *aacLive) frameADTS() ([]byte, error) {
	for skipped := 0; ; skipped++ {
		h, err := a.br.Peek(aac.ADTSHeaderSize)
		if len(h) < 7 {
			if err == nil || errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
				err = io.EOF
			}
			return nil, err
		}
		hdr, perr := aac.ParseADTS(h)
		if perr == nil && hdr.Config.SampleRate != a.cfg.SampleRate {
			return nil, fault.New(fault.Unsupported, "the AAC stream changed its sample rate")
		}
		if perr != nil || hdr.FrameLength-hdr.HeaderLength > len(a.frame) {
			if skipped > liveBytes {
				return nil, fmt.Errorf("%w: no ADTS frame", ErrCorrupt)
			}
			if _, err := a.br.Discard(1); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := a.br.Discard(hdr.HeaderLength); err != nil {
			return nil, err
		}
		p := a.frame[:hdr.FrameLength-hdr.HeaderLength]
		if _, err := io.ReadFull(a.br, p); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			return nil, err
		}
		return p, nil
	}
}

// openMP4 reads the boxes before the audio, keeping the moov box's tracks,
// and stops at the start of the mdat box.
func (a *aacLive) openMP4() error {
	head := &sparse{}
	var moov bool
	for {
		b, err := a.box(head, -1)
		if err != nil {
			return err
		}
		if b.typ == "mdat" {
			if !moov {
				return fault.New(fault.Unsupported, "this M4A file keeps its index after the audio, so it cannot be streamed (it plays once downloaded to the box)")
			}
			break
		}
		if b.typ != "moov" {
			if err := a.discard(b.body); err != nil {
				return err
			}
			continue
		}
		// The tracks are kept whole; of the rest (tags, a cover that may
		// be megabytes) only the headers, to step over them.
		for end := a.pos + b.body; a.pos < end; {
			c, err := a.box(head, end-a.pos)
			if err != nil {
				return err
			}
			if c.typ != "trak" && c.typ != "mvhd" {
				if err := a.discard(c.body); err != nil {
					return err
				}
				continue
			}
			if c.body > liveMaxHead-a.kept {
				return fmt.Errorf("%w: MP4 index of more than %d bytes", ErrCorrupt, liveMaxHead)
			}
			p := make([]byte, c.body)
			if _, err := io.ReadFull(a.br, p); err != nil {
				return fmt.Errorf("%w: the MP4 stream ended in its index", ErrCorrupt)
			}
			head.add(a.pos, p)
			a.pos += c.body
			a.kept += c.body
		}
		moov = true
	}
	// The samples lie beyond what was kept, in the rest of the stream.
	f, err := mp4.OpenAudio(head, liveEnd)
	if err != nil {
		return fmt.Errorf("mp4: %w", errAAC(err))
	}
	if a.cfg, err = aac.ParseASC(f.Config); err != nil {
		return fmt.Errorf("mp4: %w", errAAC(err))
	}
	if a.dec, err = aac.NewDecoder(a.cfg); err != nil {
		return errAAC(err)
	}
	delay, length := mp4Span(f, a.cfg)
	a.mp4, a.n, a.skip, a.left = f.Cursor(), f.Samples, delay, length
	if a.left == 0 {
		a.left = -1
	}
	return nil
}

// liveBox is a box header seen in a stream; body is what follows it.
type liveBox struct {
	typ  string
	body int64
}

// box reads a box header at the stream's position and keeps it; left is
// what the parent has left, -1 at the top (where the size may not be 0,
// except for the mdat box, which ends the index).
func (a *aacLive) box(head *sparse, left int64) (liveBox, error) {
	if a.boxes++; a.boxes > liveMaxBoxes {
		return liveBox{}, fmt.Errorf("%w: more than %d MP4 boxes before the audio", ErrCorrupt, liveMaxBoxes)
	}
	h := make([]byte, 16)
	if _, err := io.ReadFull(a.br, h[:8]); err != nil {
		return liveBox{}, fmt.Errorf("%w: the MP4 stream ended before its audio", ErrCorrupt)
	}
	n := 8
	if binary.BigEndian.Uint32(h) == 1 {
		if _, err := io.ReadFull(a.br, h[8:16]); err != nil {
			return liveBox{}, fmt.Errorf("%w: the MP4 stream ended before its audio", ErrCorrupt)
		}
		n = 16
	}
	start := a.pos
	head.add(a.pos, h[:n])
	a.pos += int64(n)
	typ := string(h[4:8])
	if left < 0 {
		if typ == "mdat" {
			return liveBox{typ: typ}, nil
		}
		if binary.BigEndian.Uint32(h) == 0 {
			return liveBox{}, fmt.Errorf("%w: MP4 box %q without a size before the audio", ErrCorrupt, typ)
		}
		// The stream is taken to be as long as the file mp4 reads.
		left = liveEnd - start
	}
	size, hdr, err := mp4.BoxSize(h[:n], left)
	if err != nil {
		return liveBox{}, errAAC(err)
	}
	return liveBox{typ: typ, body: size - hdr}, nil
}

// discard steps over n bytes of the stream.
func (a *aacLive) discard(n int64) error {
	if _, err := io.CopyN(io.Discard, a.br, n); err != nil {
		return fmt.Errorf("%w: the MP4 stream ended before its audio", ErrCorrupt)
	}
	a.pos += n
	return nil
}

// sampleMP4 reads the next sample, which lies at or after the stream's
// position.
func (a *aacLive) sampleMP4() ([]byte, error) {
	if a.next >= a.n {
		return nil, io.EOF
	}
	off, size, err := a.mp4.Sample(a.next)
	if err != nil {
		return nil, errAAC(err)
	}
	if size > len(a.frame) {
		return nil, fmt.Errorf("%w: M4A frame of %d bytes", ErrCorrupt, size)
	}
	if off < a.pos {
		return nil, fault.New(fault.Unsupported, "this M4A file's audio is not in playing order, so it cannot be streamed")
	}
	// Between the audio's samples may lie others' (chapter titles).
	if _, err := io.CopyN(io.Discard, a.br, off-a.pos); err != nil {
		return nil, err
	}
	p := a.frame[:size]
	if _, err := io.ReadFull(a.br, p); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		return nil, err
	}
	a.pos, a.next = off+int64(size), a.next+1
	return p, nil
}

// notice is the HE-AAC notice once the stream showed it is HE-AAC.
func (a *aacLive) notice() string {
	if a.dec != nil && a.dec.SBR() {
		c := a.cfg
		c.SBR = true
		return heNotice(c)
	}
	return ""
}

// sparse is the start of a file as far as a stream kept it: box headers and
// the boxes that matter, gaps where payloads were skipped.
type sparse struct {
	parts []struct {
		off int64
		p   []byte
	}
}

func (s *sparse) add(off int64, p []byte) {
	s.parts = append(s.parts, struct {
		off int64
		p   []byte
	}{off, p})
}

func (s *sparse) ReadAt(p []byte, off int64) (int, error) {
	// The parts were added in the stream's order.
	i := sort.Search(len(s.parts), func(i int) bool { return s.parts[i].off > off }) - 1
	if i >= 0 {
		if part := s.parts[i]; off-part.off <= int64(len(part.p)) && int64(len(p)) <= int64(len(part.p))-(off-part.off) {
			return copy(p, part.p[off-part.off:]), nil
		}
	}
	return 0, fmt.Errorf("%w: a part of the MP4 stream that was not kept", ErrCorrupt)
}

// adtsSync reports ADTS frames in the bytes ahead.
func (l *Live) adtsSync() bool {
	buf, _ := l.br.Peek(l.br.Size())
	return findADTS(buf) >= 0
}

func (l *Live) openAAC(isMP4 bool) error {
	a, err := openAACLive(l.br, isMP4)
	if err != nil {
		return err
	}
	l.aac, l.format = a, beep.Format{SampleRate: beep.SampleRate(a.cfg.SampleRate), NumChannels: a.cfg.OutputChannels(), Precision: 2}
	return nil
}
