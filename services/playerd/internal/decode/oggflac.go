package decode

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/playerd/internal/decode/flac"
)

// Ogg FLAC (RFC 9639, section 10.1): a first packet of 0x7F "FLAC", the
// mapping's version, a count of header packets, "fLaC" and the STREAMINFO
// block; then one metadata block per packet; then one frame per packet. A
// page's granule position counts the samples up to the end of the last
// frame completed on it. Frames are decoded by package flac; the samples a
// frame's header numbers place it in the stream, so seeking needs no
// pre-roll and a lost frame is found by the gap it leaves.

// oggFLACHead is the first packet: 13 bytes of mapping, then the
// STREAMINFO block with its 4-byte header.
const oggFLACHead = 13 + 4 + 34

type oggFLACHeaders struct {
	info    flac.StreamInfo
	blocks  [][]byte // metadata blocks after STREAMINFO, each with its header
	serial  uint32
	dataOff int64 // of the first audio page
}

// readOggFLACHeaders reads the header packets, which must end a page: the
// first audio packet begins a page of its own.
func readOggFLACHeaders(src *source) (oggFLACHeaders, error) {
	var hs oggFLACHeaders
	r := bufio.NewReaderSize(io.NewSectionReader(src, 0, src.size), 32<<10)
	var pk packets
	last := false
	for i := 0; !last; i++ {
		if i >= oggMaxHeaderPages {
			return hs, fmt.Errorf("%w: headers span more than %d pages", errOgg, oggMaxHeaderPages)
		}
		h, body, size, err := readPage(r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: missing headers", errOgg)
			}
			return hs, err
		}
		if i == 0 {
			hs.serial = h.serial
		} else if h.serial != hs.serial {
			return hs, fmt.Errorf("%w: headers interleaved with another stream", errOgg)
		}
		hs.dataOff += size
		ps, err := pk.add(h, body)
		if err != nil {
			return hs, err
		}
		for _, p := range ps {
			if last {
				return hs, fmt.Errorf("%w: audio shares a page with the headers", errOgg)
			}
			if i == 0 && hs.info.SampleRate == 0 {
				if hs.info, err = parseOggFLACHead(p); err != nil {
					return hs, err
				}
				continue
			}
			if len(p) < 4 || int(p[1])<<16|int(p[2])<<8|int(p[3]) != len(p)-4 || p[0]&0x7F == 127 || p[0]&0x7F == flacStreamInfo {
				return hs, fmt.Errorf("%w: metadata packet of %d bytes", ErrCorrupt, len(p))
			}
			if len(hs.blocks) >= flacMaxBlocks {
				return hs, fmt.Errorf("%w: more than %d metadata blocks", ErrCorrupt, flacMaxBlocks)
			}
			hs.blocks = append(hs.blocks, p)
			last = p[0]&0x80 != 0
		}
		if hs.info.SampleRate == 0 {
			return hs, fmt.Errorf("%w: no FLAC header packet", errOgg)
		}
	}
	if len(pk.pending) > 0 {
		return hs, fmt.Errorf("%w: audio shares a page with the headers", errOgg)
	}
	return hs, nil
}

func parseOggFLACHead(p []byte) (flac.StreamInfo, error) {
	if len(p) != oggFLACHead || !bytes.HasPrefix(p, []byte("\x7fFLAC")) || p[5] != 1 ||
		string(p[9:13]) != "fLaC" || p[13]&0x7F != flacStreamInfo || int(p[14])<<16|int(p[15])<<8|int(p[16]) != 34 {
		return flac.StreamInfo{}, fmt.Errorf("%w: no FLAC header packet", errOgg)
	}
	si := p[17:]
	if err := checkStreamInfo(si); err != nil {
		return flac.StreamInfo{}, err
	}
	info, err := flac.ParseStreamInfo(si)
	if err != nil {
		return info, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if p[13]&0x80 != 0 {
		return info, fmt.Errorf("%w: no VORBIS_COMMENT block", errOgg) // the mapping requires one
	}
	return info, nil
}

// oggFLACLength is STREAMINFO's count of samples, or when the encoder left
// it unknown, the last page's granule position.
func oggFLACLength(src *source, info flac.StreamInfo) (int, error) {
	if info.TotalSamples > 0 {
		return int(min(info.TotalSamples, 1<<40)), nil
	}
	g, err := lastGranule(src)
	if err != nil {
		return 0, err
	}
	return int(min(g, 1<<40)), nil
}

type oggFLACStream struct {
	src     *source
	r       *bufio.Reader
	hs      oggFLACHeaders
	frames  *flac.Frames
	scale   float64
	length  int
	pk      packets
	packets [][]byte
	pending [][]int32 // what is left of the last frame
	silence int       // samples of silence owed for damage, handed out before pending
	owed    uint64    // the end of a damaged frame whose header held
	pos     int       // samples handed out, which is the stream position
	eof     bool
	err     error
}

func openOggFLAC(src *source) (beep.StreamSeekCloser, beep.Format, error) {
	hs, err := readOggFLACHeaders(src)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("ogg flac: %w", err)
	}
	n, err := oggFLACLength(src, hs.info)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("ogg flac: %w", err)
	}
	s := &oggFLACStream{
		src: src, r: bufio.NewReaderSize(src, readBuffer), hs: hs, frames: flac.NewFrames(hs.info),
		scale: 1 / float64(int64(1)<<(hs.info.BitsPerSample-1)), length: n,
	}
	if err := s.Seek(0); err != nil {
		return nil, beep.Format{}, err
	}
	format := beep.Format{SampleRate: beep.SampleRate(hs.info.SampleRate), NumChannels: min(hs.info.Channels, 2), Precision: 2}
	return s, format, nil
}

func (s *oggFLACStream) Stream(samples [][2]float64) (int, bool) {
	n := 0
	for n < len(samples) && s.err == nil && s.pos < s.length {
		if s.silence > 0 {
			k := min(s.silence, len(samples)-n, s.length-s.pos)
			clear(samples[n : n+k])
			s.silence -= k
			s.pos += k
			n += k
			continue
		}
		if len(s.pending) == 0 || len(s.pending[0]) == 0 {
			if !s.next() {
				break
			}
			continue
		}
		l, r := s.pending[0], s.pending[0]
		if len(s.pending) > 1 {
			r = s.pending[1]
		}
		k := min(len(l), len(samples)-n, s.length-s.pos)
		out := samples[n : n+k]
		l, r = l[:k], r[:k]
		for i := range out {
			out[i] = [2]float64{float64(l[i]) * s.scale, float64(r[i]) * s.scale}
		}
		for ch := range s.pending {
			s.pending[ch] = s.pending[ch][k:]
		}
		s.pos += k
		n += k
	}
	return n, n > 0
}

// next decodes the next frame into pending, with the silence owed before
// it; false at the end of the stream or on an error.
func (s *oggFLACStream) next() bool {
	// A gap longer than this is not a lost frame but frame numbers gone
	// wrong; the stream then follows the frames.
	plausible := uint64(64 * s.hs.info.MaxBlock)
	for {
		if len(s.packets) == 0 {
			if s.eof {
				// A damaged last frame is still owed.
				if pos := uint64(s.pos); s.owed > pos {
					s.silence, s.owed = int(s.owed-pos), 0
					return true
				}
				return false
			}
			h, body, _, err := readPage(s.r)
			if errors.Is(err, errOgg) {
				// A damaged page: on to the next capture pattern. The
				// frames lost with it leave a gap in the frame numbers,
				// which the next frame fills with silence.
				s.pk.pending = nil
				if !s.resync() {
					s.eof = true
				}
				continue
			}
			if errors.Is(err, io.EOF) {
				s.eof = true
				continue
			}
			if err != nil {
				s.err = fmt.Errorf("ogg flac: %w", err)
				return false
			}
			if h.serial != s.hs.serial {
				continue // another logical stream multiplexed beside this one
			}
			if s.packets, err = s.pk.add(h, body); err != nil {
				s.err = fmt.Errorf("ogg flac: %w", err)
				return false
			}
			continue
		}
		p := s.packets[0]
		s.packets = s.packets[1:]
		pcm, first, size, err := s.frames.Decode(p)
		pos := uint64(s.pos)
		if err != nil {
			if size > 0 && first+uint64(size) > pos && first <= pos+plausible {
				s.owed = max(s.owed, first+uint64(size))
			}
			continue
		}
		end := first + uint64(len(pcm[0]))
		switch {
		case end <= pos:
			continue // before a seek's target
		case first > pos && first-pos <= plausible:
			s.silence = int(first - pos)
		case first > pos:
			s.pos = int(min(first, uint64(s.length)))
		default:
			for ch := range pcm {
				pcm[ch] = pcm[ch][pos-first:]
			}
		}
		s.owed = 0
		s.pending = pcm
		return true
	}
}

// oggMaxResync bounds the bytes searched for the next page after a damaged
// one: pages are at most 64 KB, so more means the rest is not Ogg.
const oggMaxResync = 1 << 20

// resync skips to the next "OggS"; false when there is none near.
func (s *oggFLACStream) resync() bool {
	for range oggMaxResync {
		b, err := s.r.Peek(4)
		if err != nil {
			return false
		}
		if string(b) == "OggS" {
			return true
		}
		if _, err := s.r.Discard(1); err != nil {
			return false
		}
	}
	return false
}

func (s *oggFLACStream) Err() error    { return s.err }
func (s *oggFLACStream) Len() int      { return s.length }
func (s *oggFLACStream) Position() int { return s.pos }
func (s *oggFLACStream) Close() error  { return s.src.Close() }

// Seek restarts at the last page that begins a fresh packet and whose
// preceding page's granule position is at or before p; next drops the
// samples of the frames before p. The walk reads page headers only.
func (s *oggFLACStream) Seek(p int) error {
	if p < 0 || p > s.length {
		return fmt.Errorf("ogg flac: seek %d outside 0..%d", p, s.length)
	}
	start, off, prev := s.hs.dataOff, s.hs.dataOff, int64(0)
	var h [oggHeaderBytes + 255]byte
	for off < s.src.size && prev <= int64(p) {
		n, err := s.src.ReadAt(h[:], off)
		if n < oggHeaderBytes {
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("ogg flac: %w", err)
			}
			break
		}
		if string(h[:4]) != "OggS" || h[4] != 0 || n < oggHeaderBytes+int(h[26]) {
			break // damage: decoding from start finds it
		}
		if binary.LittleEndian.Uint32(h[14:]) == s.hs.serial && h[5]&1 == 0 {
			start = off
		}
		size := int64(oggHeaderBytes + int(h[26]))
		for _, l := range h[oggHeaderBytes : oggHeaderBytes+int(h[26])] {
			size += int64(l)
		}
		off += size
		if g := int64(binary.LittleEndian.Uint64(h[6:])); g >= 0 && binary.LittleEndian.Uint32(h[14:]) == s.hs.serial {
			prev = g
		}
	}
	if _, err := s.src.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("ogg flac: %w", err)
	}
	s.r.Reset(s.src)
	s.pk.pending, s.packets, s.pending = nil, nil, nil
	s.silence, s.owed, s.pos, s.eof, s.err = 0, 0, p, false, nil
	return nil
}

// oggFLACDuration reads the length from the headers, checked as opening
// checks them.
func oggFLACDuration(src *source) (float64, bool, error) {
	hs, err := readOggFLACHeaders(src)
	if err != nil {
		return 0, false, fmt.Errorf("ogg flac: %w", err)
	}
	n, err := oggFLACLength(src, hs.info)
	if err != nil {
		return 0, false, fmt.Errorf("ogg flac: %w", err)
	}
	if n <= 0 {
		return 0, false, fmt.Errorf("ogg flac: %w: no audio in the file", ErrCorrupt)
	}
	return float64(n) / float64(hs.info.SampleRate), true, nil
}

// oggFLACTags reads the title, artist, album and cover from the
// VORBIS_COMMENT and PICTURE blocks (a front cover preferred), which the
// tag reader the other formats use does not know in Ogg.
func oggFLACTags(src *source) (Tags, error) {
	hs, err := readOggFLACHeaders(src)
	if err != nil {
		return Tags{}, err
	}
	var t Tags
	var pics [][]byte
	var albumArtist string
	found := false
	for _, b := range hs.blocks {
		body := b[4:]
		switch b[0] & 0x7F {
		case flacComment:
			if err := checkVorbisComment(body); err != nil {
				return Tags{}, err
			}
			found = true
			for _, c := range vorbisComments(body) {
				k, v, _ := strings.Cut(c, "=")
				switch strings.ToUpper(k) {
				case "TITLE":
					t.Title = cmpOr(t.Title, clean(v))
				case "ARTIST":
					t.Artist = cmpOr(t.Artist, clean(v))
				case "ALBUMARTIST":
					albumArtist = cmpOr(albumArtist, clean(v))
				case "ALBUM":
					t.Album = cmpOr(t.Album, clean(v))
				case "METADATA_BLOCK_PICTURE":
					if pic, err := base64.StdEncoding.DecodeString(v); err == nil {
						pics = append(pics, pic)
					}
				}
			}
		case flacPicture:
			if err := checkPicture(body); err != nil {
				return Tags{}, err
			}
			found = true
			pics = append(pics, body)
		}
	}
	t.Artist = cmpOr(t.Artist, albumArtist)
	t.Picture = choosePicture(pics)
	if !found {
		return Tags{}, ErrNoTags
	}
	return t, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// vorbisComments returns the comments of a block checkVorbisComment passed.
func vorbisComments(b []byte) []string {
	le := binary.LittleEndian
	r := &reader{b: b, ok: true}
	r.bytes(r.u32(le))
	count := r.u32(le)
	out := make([]string, 0, count)
	for range count {
		c := r.bytes(r.u32(le))
		if !r.ok {
			break
		}
		out = append(out, string(c))
	}
	return out
}

// choosePicture takes the front cover (picture type 3) of checked picture
// blocks, else the first picture.
func choosePicture(pics [][]byte) *Picture {
	var best *Picture
	be := binary.BigEndian
	for _, b := range pics {
		r := &reader{b: b, ok: true}
		typ := r.u32(be)
		mime := r.bytes(r.u32(be))
		r.bytes(r.u32(be))
		r.bytes(16)
		data := r.bytes(r.u32(be))
		if !r.ok || len(data) == 0 {
			continue
		}
		p := &Picture{MIMEType: clean(string(mime)), Data: data}
		if typ == 3 {
			return p
		}
		if best == nil {
			best = p
		}
	}
	return best
}
