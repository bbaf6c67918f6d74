package decode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/gopxl/beep/v2"
	"github.com/pion/opus"
)

// Opus always decodes at 48 kHz (RFC 7845 §4); granule positions count 48 kHz
// samples including the encoder's pre-skip, which must be dropped.
const (
	opusRate     = 48000
	opusMaxFrame = 5760 // 120 ms, the longest Opus packet
	opusPreRoll  = 3840 // 80 ms of decoding before a seek target (RFC 7845 §4.6)
)

type opusStream struct {
	f        *source
	r        *bufio.Reader
	dec      opus.Decoder
	channels int
	preSkip  int
	gain     float64 // the header's output gain, linear
	length   int     // samples after pre-skip
	dataOff  int64

	pk      packets   // packet continued on the next page
	packets [][]byte  // complete packets not yet decoded
	pcm     []float32 // decoded, interleaved, not yet streamed
	pcmOff  int
	discard int // samples still to drop (pre-skip or seek pre-roll)
	pos     int
	err     error
}

func openOpus(f *source) (beep.StreamSeekCloser, beep.Format, error) {
	s := &opusStream{f: f, r: bufio.NewReaderSize(f, 32<<10)}
	if err := s.readHeaders(); err != nil {
		f.Close()
		return nil, beep.Format{}, fmt.Errorf("opus: %w", err)
	}
	var err error
	if s.dec, err = opus.NewDecoderWithOutput(opusRate, s.channels); err != nil {
		f.Close()
		return nil, beep.Format{}, fmt.Errorf("opus: %w", err)
	}
	last, err := lastGranule(f)
	if err != nil {
		f.Close()
		return nil, beep.Format{}, fmt.Errorf("opus: %w", err)
	}
	s.length = max(int(last)-s.preSkip, 0)
	if err := s.Seek(0); err != nil {
		f.Close()
		return nil, beep.Format{}, err
	}
	return s, beep.Format{SampleRate: opusRate, NumChannels: s.channels, Precision: 2}, nil
}

// opusOutputGain is the linear factor of the ID header's output gain (RFC
// 7845 §5.1: a signed Q7.8 number of dB at bytes 16..17), which a player
// applies to everything it decodes. id is at least 19 bytes long.
func opusOutputGain(id []byte) float64 {
	q := int16(binary.LittleEndian.Uint16(id[16:18]))
	return math.Pow(10, float64(q)/256/20)
}

// readHeaders reads the identification and comment headers and remembers
// where the audio pages start.
func (s *opusStream) readHeaders() error {
	var off int64
	for got := 0; got < 2; {
		hdr, body, size, err := readPage(s.r)
		if err != nil {
			return err
		}
		off += size
		ps, err := s.pk.add(hdr, body)
		if err != nil {
			return err
		}
		for _, p := range ps {
			switch got {
			case 0:
				if len(p) < 19 || !bytes.HasPrefix(p, []byte("OpusHead")) {
					return fmt.Errorf("%w: no OpusHead", errOgg)
				}
				s.channels = int(p[9])
				s.preSkip = int(binary.LittleEndian.Uint16(p[10:12]))
				s.gain = opusOutputGain(p)
				if s.channels < 1 || s.channels > 2 || (len(p) > 18 && p[18] > 1) {
					return fmt.Errorf("%d channels with mapping family %d: only mono and stereo are supported", s.channels, p[18])
				}
			case 1:
				if !bytes.HasPrefix(p, []byte("OpusTags")) {
					return fmt.Errorf("%w: no OpusTags", errOgg)
				}
			}
			got++
		}
	}
	if len(s.pk.pending) > 0 {
		return fmt.Errorf("%w: audio shares a page with the headers", errOgg)
	}
	s.dataOff = off
	return nil
}

// lastGranule reads the granule position of the last page from the file's
// tail, which is the stream's length including pre-skip.
func lastGranule(f *source) (int64, error) {
	size := f.size
	tail := min(size, 64<<10)
	buf := make([]byte, tail)
	if _, err := f.ReadAt(buf, size-tail); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	for i := bytes.LastIndex(buf, []byte("OggS")); i >= 0; i = bytes.LastIndex(buf[:i], []byte("OggS")) {
		if i+oggHeaderBytes <= len(buf) && buf[i+4] == 0 {
			if g := int64(binary.LittleEndian.Uint64(buf[i+6 : i+14])); g >= 0 {
				return g, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: no final page", errOgg)
}

func (s *opusStream) Stream(samples [][2]float64) (int, bool) {
	n := 0
	for n < len(samples) {
		if s.pcmOff >= len(s.pcm) {
			if !s.decodeNext() {
				break
			}
			continue
		}
		frames := (len(s.pcm) - s.pcmOff) / s.channels
		if s.discard > 0 {
			d := min(s.discard, frames)
			s.discard -= d
			s.pcmOff += d * s.channels
			continue
		}
		if s.pos >= s.length {
			break // the last packet is padded past the stream's end
		}
		take := min(frames, len(samples)-n, s.length-s.pos)
		for i := range take {
			j := s.pcmOff + i*s.channels
			l := float64(s.pcm[j]) * s.gain
			r := l
			if s.channels == 2 {
				r = float64(s.pcm[j+1]) * s.gain
			}
			samples[n+i] = [2]float64{l, r}
		}
		n += take
		s.pos += take
		s.pcmOff += take * s.channels
	}
	return n, n > 0
}

// decodeNext decodes the next packet into pcm; false at the end or on error.
func (s *opusStream) decodeNext() bool {
	for len(s.packets) == 0 {
		h, body, _, err := readPage(s.r)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = fmt.Errorf("opus: %w", err)
			}
			return false
		}
		if s.packets, err = s.pk.add(h, body); err != nil {
			s.err = fmt.Errorf("opus: %w", err)
			return false
		}
	}
	p := s.packets[0]
	s.packets = s.packets[1:]
	if cap(s.pcm) < opusMaxFrame*s.channels {
		s.pcm = make([]float32, opusMaxFrame*s.channels)
	}
	s.pcm = s.pcm[:opusMaxFrame*s.channels]
	n, err := s.dec.DecodeToFloat32(p, s.pcm)
	if err != nil {
		s.err = fmt.Errorf("opus: %w", err)
		return false
	}
	s.pcm = s.pcm[:n*s.channels]
	s.pcmOff = 0
	return true
}

func (s *opusStream) Err() error    { return s.err }
func (s *opusStream) Len() int      { return s.length }
func (s *opusStream) Position() int { return s.pos }
func (s *opusStream) Close() error  { return s.f.Close() }

// Seek restarts decoding at the last page that begins a fresh packet at
// least the pre-roll before the target, then drops samples up to the target.
func (s *opusStream) Seek(p int) error {
	if p < 0 || p > s.length {
		return fmt.Errorf("opus: seek %d outside 0..%d", p, s.length)
	}
	target := int64(p + s.preSkip)
	if _, err := s.f.Seek(s.dataOff, io.SeekStart); err != nil {
		return fmt.Errorf("opus: %w", err)
	}
	start, startGranule := s.dataOff, int64(0)
	off, prevGranule := s.dataOff, int64(0)
	hr := bufio.NewReaderSize(s.f, 32<<10)
	for {
		h, _, size, err := readPage(hr)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("opus: %w", err)
		}
		if prevGranule > target-opusPreRoll {
			break
		}
		if !h.continued {
			start, startGranule = off, prevGranule
		}
		off += size
		if h.granule >= 0 {
			prevGranule = h.granule
		}
	}
	if _, err := s.f.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("opus: %w", err)
	}
	s.r.Reset(s.f)
	if err := s.dec.Init(opusRate, s.channels); err != nil {
		return fmt.Errorf("opus: %w", err)
	}
	s.pk.pending, s.packets, s.pcm, s.pcmOff = nil, nil, s.pcm[:0], 0
	s.discard = int(target - startGranule)
	s.pos = p
	s.err = nil
	return nil
}
