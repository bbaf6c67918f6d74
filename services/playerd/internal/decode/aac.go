package decode

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/decode/aac"
	"github.com/storybox/storybox/services/playerd/internal/decode/mp4"
)

// AAC arrives in two containers: ADTS (.aac files, radio) frames with a
// header each, and MP4 (.m4a, .m4b) whose sample table says where each
// frame is. Both feed the same stream: the decoder, frames by index, and
// the span of output samples that plays (after the encoder's delay, up to
// the padding; for an audiobook's chapter, that chapter).

// errNotAAC wraps the aac and mp4 packages' errors into the boundary's.
func errAAC(err error) error {
	switch {
	case errors.Is(err, aac.ErrUnsupported), errors.Is(err, mp4.ErrUnsupported):
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	case errors.Is(err, aac.ErrCorrupt), errors.Is(err, mp4.ErrCorrupt):
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return err
}

// heNotice is what the box says of an HE-AAC file or station: it plays the
// AAC-LC core, without the extensions that rebuild the upper half of the
// spectrum.
func heNotice(c aac.Config) string {
	kind := "HE-AAC"
	if c.PS {
		kind = "HE-AACv2"
	}
	return fmt.Sprintf("%s: plays its AAC-LC core at %d Hz, without the high frequencies (and stereo, for v2) that SBR/PS add", kind, c.SampleRate)
}

// maxFrame bounds an AAC frame: 6144 bits per channel (4.5.3.1), for the
// two channels decoded and a margin for more.
const maxFrame = 1 << 14

// frameSource gives a stream's frames by index.
type frameSource interface {
	count() int
	frame(i int) ([]byte, error)
}

// window serves reads of a file from a buffer of readBuffer bytes, so that
// playing costs a system call every few seconds instead of one per frame.
type window struct {
	src   io.ReaderAt
	size  int64
	buf   []byte
	start int64
}

func newWindow(src io.ReaderAt, size int64) *window {
	return &window{src: src, size: size, start: -1}
}

func (w *window) at(off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || off > w.size || int64(n) > w.size-off {
		return nil, fmt.Errorf("%w: read of %d bytes at %d beyond the end", ErrCorrupt, n, off)
	}
	if w.start < 0 || off < w.start || off+int64(n) > w.start+int64(len(w.buf)) {
		if w.buf == nil {
			w.buf = make([]byte, readBuffer)
		}
		k := min(int64(cap(w.buf)), w.size-off)
		if int64(n) > k {
			return nil, fmt.Errorf("%w: frame of %d bytes", ErrCorrupt, n)
		}
		m, err := w.src.ReadAt(w.buf[:k], off)
		if int64(m) < k {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: short read", ErrCorrupt)
			}
			return nil, err
		}
		w.buf, w.start = w.buf[:k], off
	}
	return w.buf[off-w.start : off-w.start+int64(n)], nil
}

// aacStream plays frames through the decoder.
type aacStream struct {
	src    frameSource
	dec    *aac.Decoder
	delay  int // output samples before position 0
	length int
	pos    int
	next   int // frame to decode next
	skip   int // decoded samples still to drop (seek, delay)
	pcm    [][]float32
	have   int // samples in pcm
	used   int // of them streamed or dropped
	err    error
}

func newAACStream(src frameSource, cfg aac.Config, delay, length int) (*aacStream, beep.Format, error) {
	dec, err := aac.NewDecoder(cfg)
	if err != nil {
		return nil, beep.Format{}, errAAC(err)
	}
	total := src.count() * aac.FrameSamples
	delay = max(0, min(delay, total))
	if length <= 0 || length > total-delay {
		length = total - delay
	}
	s := &aacStream{src: src, dec: dec, delay: delay, length: length, skip: delay}
	format := beep.Format{SampleRate: beep.SampleRate(cfg.SampleRate), NumChannels: cfg.OutputChannels(), Precision: 2}
	return s, format, nil
}

func (s *aacStream) Stream(out [][2]float64) (int, bool) {
	n := 0
	for n < len(out) && s.pos < s.length && s.err == nil {
		if s.used == s.have {
			if !s.decode() {
				break
			}
			continue
		}
		if s.skip > 0 {
			d := min(s.skip, s.have-s.used)
			s.skip -= d
			s.used += d
			continue
		}
		k := min(len(out)-n, s.have-s.used, s.length-s.pos)
		copyPCM(out[n:n+k], s.pcm, s.used)
		n += k
		s.used += k
		s.pos += k
	}
	return n, n > 0 || (s.pos < s.length && s.err == nil)
}

// copyPCM fills out from the decoder's channels at from; a mono stream
// plays on both sides.
func copyPCM(out [][2]float64, pcm [][]float32, from int) {
	l := pcm[0][from : from+len(out)]
	r := l
	if len(pcm) > 1 {
		r = pcm[1][from : from+len(out)]
	}
	for i := range out {
		out[i] = [2]float64{float64(l[i]), float64(r[i])}
	}
}

func (s *aacStream) decode() bool {
	if s.next >= s.src.count() {
		s.length = s.pos // the frames ran out before the length the file claims
		return false
	}
	f, err := s.src.frame(s.next)
	if err == nil {
		s.pcm, err = s.dec.Decode(f)
	}
	if err != nil {
		s.err = fmt.Errorf("frame %d: %w", s.next, errAAC(err))
		return false
	}
	s.next++
	s.have, s.used = aac.FrameSamples, 0
	return true
}

func (s *aacStream) Err() error    { return s.err }
func (s *aacStream) Len() int      { return s.length }
func (s *aacStream) Position() int { return s.pos }
func (s *aacStream) Close() error  { return nil }

// Seek decodes from the frame before the one holding p and drops what
// comes before p: a frame's first half needs the previous frame's second.
func (s *aacStream) Seek(p int) error {
	if p < 0 || p > s.length {
		return fmt.Errorf("seek %d outside 0..%d", p, s.length)
	}
	a := p + s.delay
	start := max(a/aac.FrameSamples-1, 0)
	s.dec.Reset()
	s.next, s.skip, s.have, s.used, s.pos, s.err = start, a-start*aac.FrameSamples, 0, 0, p, nil
	return nil
}

// adtsFrames indexes an ADTS file: the offset of every 64th frame, and a
// cursor for reading on from there.
type adtsFrames struct {
	w      *window
	marks  []int64
	n      int
	cur    int
	curOff int64
}

const adtsMarkEvery = 64

func (a *adtsFrames) count() int { return a.n }

func (a *adtsFrames) frame(i int) ([]byte, error) {
	if i < 0 || i >= a.n {
		return nil, fmt.Errorf("%w: frame %d of %d", ErrCorrupt, i, a.n)
	}
	if i != a.cur {
		a.cur, a.curOff = i/adtsMarkEvery*adtsMarkEvery, a.marks[i/adtsMarkEvery]
		for a.cur < i {
			h, err := a.header(a.curOff)
			if err != nil {
				return nil, err
			}
			a.cur++
			a.curOff += int64(h.FrameLength)
		}
	}
	h, err := a.header(a.curOff)
	if err != nil {
		return nil, err
	}
	p, err := a.w.at(a.curOff+int64(h.HeaderLength), h.FrameLength-h.HeaderLength)
	if err != nil {
		return nil, err
	}
	a.cur++
	a.curOff += int64(h.FrameLength)
	return p, nil
}

func (a *adtsFrames) header(off int64) (aac.ADTSHeader, error) {
	n := min(int64(aac.ADTSHeaderSize), a.w.size-off)
	p, err := a.w.at(off, int(n))
	if err != nil {
		return aac.ADTSHeader{}, err
	}
	h, err := aac.ParseADTS(p)
	if err != nil {
		return h, errAAC(err)
	}
	return h, nil
}

// openADTS indexes the frames after any ID3v2 tag. Every header must agree
// with the first on the stream's configuration; trailing bytes that are not
// a whole frame (an ID3v1 tag, a cut download) end the stream.
func openADTS(src *source) (beep.StreamSeekCloser, beep.Format, error) {
	start, err := skipID3v2(src)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("aac: %w", err)
	}
	a := &adtsFrames{w: newWindow(src, src.size)}
	var first aac.ADTSHeader
	off := start
	for off+7 <= src.size {
		h, err := a.header(off)
		if err != nil {
			if a.n > 0 {
				break
			}
			return nil, beep.Format{}, fmt.Errorf("aac: %w", err)
		}
		if a.n == 0 {
			first = h
		} else if h.Config != first.Config {
			return nil, beep.Format{}, fmt.Errorf("aac: %w: frame %d changes the stream's configuration", ErrCorrupt, a.n)
		}
		if off+int64(h.FrameLength) > src.size {
			break
		}
		if a.n%adtsMarkEvery == 0 {
			a.marks = append(a.marks, off)
		}
		a.n++
		off += int64(h.FrameLength)
	}
	if a.n == 0 {
		return nil, beep.Format{}, fmt.Errorf("aac: %w: no ADTS frame", ErrCorrupt)
	}
	a.cur, a.curOff = 0, start
	s, format, err := newAACStream(a, first.Config, 0, 0)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("aac: %w", err)
	}
	return s, format, nil
}

// mp4Frames reads an MP4 track's samples.
type mp4Frames struct {
	w   *window
	cur *mp4.Cursor
	n   int
}

func (m *mp4Frames) count() int { return m.n }

func (m *mp4Frames) frame(i int) ([]byte, error) {
	off, size, err := m.cur.Sample(i)
	if err != nil {
		return nil, errAAC(err)
	}
	if size > maxFrame {
		return nil, fmt.Errorf("%w: frame of %d bytes", ErrCorrupt, size)
	}
	return m.w.at(off, size)
}

// openMP4 opens an M4A/M4B file; chapter > 0 limits the stream to that
// chapter (1-based), as the library lists an audiobook's chapters.
func openMP4(src *source, chapter int) (beep.StreamSeekCloser, beep.Format, error) {
	f, err := mp4.Open(src, src.size)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("mp4: %w", errAAC(err))
	}
	cfg, err := aac.ParseASC(f.Config)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("mp4: %w", errAAC(err))
	}
	delay, length := mp4Span(f, cfg)
	if chapter > 0 {
		if chapter > len(f.Chapters) {
			return nil, beep.Format{}, fault.New(fault.NotFound, "chapter %d is not in the file", chapter)
		}
		c := f.Chapters[chapter-1]
		from, to := int(c.Start*float64(cfg.SampleRate)+0.5), int(c.End*float64(cfg.SampleRate)+0.5)
		from, to = min(from, length), min(to, length)
		delay, length = delay+from, max(to-from, 0)
	}
	s, format, err := newAACStream(&mp4Frames{w: newWindow(src, src.size), cur: f.Cursor(), n: f.Samples}, cfg, delay, length)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("mp4: %w", err)
	}
	return s, format, nil
}

// mp4Span is where an MP4 file's audio starts in the decoder's output and
// how long it plays, in output samples: from the edit list, else from
// iTunSMPB, else all of it. Both are at most the samples its frames decode
// to: a file's claims beyond them are not believed.
func mp4Span(f *mp4.File, cfg aac.Config) (delay, length int) {
	total := uint64(f.Samples) * aac.FrameSamples
	toOut := func(t uint64) uint64 {
		hi, lo := bits.Mul64(t, uint64(cfg.SampleRate))
		if hi >= uint64(f.Timescale) {
			return total
		}
		q, _ := bits.Div64(hi, lo, uint64(f.Timescale))
		return q
	}
	var d, n uint64
	switch {
	case f.Start > 0 || f.Length > 0:
		d, n = toOut(f.Start), toOut(f.Length)
		if f.Length == 0 {
			n = toOut(f.Duration - f.Start)
		}
	case f.SMPB.Valid:
		// iTunSMPB counts samples of the full output rate, twice the
		// core's for HE-AAC.
		div := uint64(1)
		if cfg.SBR {
			div = 2
		}
		d, n = f.SMPB.Delay/div, f.SMPB.Samples/div
	default:
		n = toOut(f.Duration)
	}
	d = min(d, total)
	return int(d), int(min(n, total-d))
}

// ChapterPath names chapter n (from 1) of an audiobook file, as the library
// lists it: the file's path with a fragment that Open understands.
func ChapterPath(path string, n int) string { return path + chapterMark + strconv.Itoa(n) }

const chapterMark = "#chapter="

// splitChapter undoes ChapterPath.
func splitChapter(path string) (string, int, bool) {
	i := strings.LastIndex(path, chapterMark)
	if i < 0 {
		return path, 0, false
	}
	n, err := strconv.Atoi(path[i+len(chapterMark):])
	if err != nil || n < 1 {
		return path, 0, false
	}
	return path[:i], n, true
}

// Chapter is a chapter of an audiobook, in seconds.
type Chapter struct {
	Title      string
	Start, End float64
}

// mp4Info reads the tags, chapters and duration of an MP4 file.
func mp4Info(src *source) (mp4.Tags, []Chapter, float64, string, error) {
	f, err := mp4.Open(src, src.size)
	if err != nil {
		return mp4.Tags{}, nil, 0, "", fmt.Errorf("mp4: %w", errAAC(err))
	}
	cfg, err := aac.ParseASC(f.Config)
	if err != nil {
		return mp4.Tags{}, nil, 0, "", fmt.Errorf("mp4: %w", errAAC(err))
	}
	var chapters []Chapter
	for _, c := range f.Chapters {
		chapters = append(chapters, Chapter{Title: clean(c.Title), Start: c.Start, End: c.End})
	}
	_, length := mp4Span(f, cfg)
	notice := ""
	if cfg.SBR {
		notice = heNotice(cfg)
	}
	return f.Tags, chapters, float64(length) / float64(cfg.SampleRate), notice, nil
}

// adtsAfterID3 tells an ADTS file with an ID3v2 tag (as podcasts and radio
// recordings have) from an MP3 one: the first frame after the tag is ADTS.
func adtsAfterID3(src *source) bool {
	n, err := skipID3v2(src)
	if err != nil {
		return false
	}
	var h [2]byte
	if _, err := src.ReadAt(h[:], n); err != nil {
		return false
	}
	return h[0] == 0xff && h[1]&0xf6 == 0xf0
}

// isADTS tells an ADTS file, with or without an ID3v2 tag.
func isADTS(src *source) bool {
	var h [12]byte
	n, _ := src.ReadAt(h[:], 0)
	switch sniff(h[:n]) {
	case "aac":
		return true
	case "mp3":
		return adtsAfterID3(src)
	}
	return false
}

// adtsNotice decodes an ADTS file's first frame: an ADTS header says
// nothing of SBR, its frames' fill elements do.
func adtsNotice(src *source) (string, error) {
	start, err := skipID3v2(src)
	if err != nil {
		return "", err
	}
	a := &adtsFrames{w: newWindow(src, src.size), marks: []int64{start}, n: 1, curOff: start}
	h, err := a.header(start)
	if err != nil {
		return "", err
	}
	frame, err := a.frame(0)
	if err != nil {
		return "", err
	}
	dec, err := aac.NewDecoder(h.Config)
	if err != nil {
		return "", errAAC(err)
	}
	if _, err := dec.Decode(frame); err != nil || !dec.SBR() {
		return "", nil // a damaged first frame is the player's to find
	}
	c := h.Config
	c.SBR = true
	return heNotice(c), nil
}
