package output

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// WAV writes what the speaker would hear to a 16-bit stereo WAV file at the
// rate it was created with. It models a device without a buffer: every frame
// Write accepts is heard, so Drop loses nothing and the file holds exactly the
// samples the player sent.
type WAV struct {
	path   string
	rate   int
	paced  bool
	f      *os.File
	w      *bufio.Writer
	p      *pacer // nil when unpaced
	frames int64
	buf    []byte
}

const wavHeaderSize = 44

// CreateWAV creates (or truncates) path at rate. paced makes Write block
// like a real device; tests that only look at the samples pass false.
func CreateWAV(path string, rate int, paced bool) (*WAV, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("wav sink: %w", err)
	}
	s := newWAV(f, path, rate, paced, 0)
	if err := s.writeHeader(); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func newWAV(f *os.File, path string, rate int, paced bool, frames int64) *WAV {
	s := &WAV{path: path, rate: rate, paced: paced, f: f, w: bufio.NewWriterSize(f, 64<<10), frames: frames}
	if paced {
		s.p = newPacer(rate)
		s.p.lead = 0
	}
	return s
}

// WAVOpener opens path as the player's output for a whole run: the first
// open creates the file, later ones (a new rate, a lost device) continue it.
// A WAV file has one rate: it is the rate asked for until the first frame is
// written, and stays that rate from then on; a later open at another rate
// gets a sink at the file's rate, which the player converts to, as it does
// for a device that offers only that rate.
func WAVOpener(path string, paced bool) Opener {
	var last *WAV
	return func(rate int) (Sink, error) {
		if last == nil || last.frames == 0 {
			s, err := CreateWAV(path, rate, paced)
			if err != nil {
				return nil, err
			}
			last = s
			return s, nil
		}
		s, err := last.reopen()
		if err != nil {
			return nil, err
		}
		last = s
		return s, nil
	}
}

// reopen continues the closed file s at its end.
func (s *WAV) reopen() (*WAV, error) {
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("wav sink: %w", err)
	}
	if _, err := f.Seek(wavHeaderSize+s.frames*4, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("wav sink: %w", err)
	}
	return newWAV(f, s.path, s.rate, s.paced, s.frames), nil
}

// Rate is the file's rate.
func (s *WAV) Rate() int { return s.rate }

func (s *WAV) Write(frames [][2]float64) error {
	s.buf = s.buf[:0]
	for _, fr := range frames {
		s.buf = binary.LittleEndian.AppendUint16(s.buf, uint16(ToS16(fr[0])))
		s.buf = binary.LittleEndian.AppendUint16(s.buf, uint16(ToS16(fr[1])))
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return fmt.Errorf("wav sink: %w", err)
	}
	s.frames += int64(len(frames))
	if s.p != nil {
		// A paced file stands for a device: each period is in the file
		// when a device would start playing it, not when a buffer of a
		// third of a second fills, so command → sound can be timed.
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("wav sink: %w", err)
		}
		s.p.wrote(len(frames))
	}
	return nil
}

// ToS16 converts a sample to signed 16 bit with clipping and rounding, the
// same way for every integer sink so their outputs compare bit for bit. The
// decoders scale n-bit samples by 2^-(n-1), so scaling by 2^15 gives every
// sample of a 16-bit file back as it was: played at its own rate at full
// volume, the output is the file, bit for bit.
func ToS16(v float64) int16 {
	v = math.Round(v * (1 << 15))
	if v > math.MaxInt16 {
		return math.MaxInt16
	}
	if v < math.MinInt16 {
		return math.MinInt16
	}
	return int16(v)
}

func (s *WAV) Drop() error { return s.sync() }

// Drain flushes and rewrites the header, so the file is a valid WAV whenever
// playback has ended.
func (s *WAV) Drain() error {
	if s.p != nil {
		s.p.drain()
	}
	return s.sync()
}

// Frames reports how many frames were written so far.
func (s *WAV) Frames() int64 { return s.frames }

func (s *WAV) Close() error {
	err := s.sync()
	if cerr := s.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("wav sink: %w", cerr)
	}
	return err
}

func (s *WAV) sync() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("wav sink: %w", err)
	}
	if _, err := s.f.Seek(0, 0); err != nil {
		return fmt.Errorf("wav sink: %w", err)
	}
	if err := s.writeHeader(); err != nil {
		return err
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("wav sink: %w", err)
	}
	if _, err := s.f.Seek(0, 2); err != nil {
		return fmt.Errorf("wav sink: %w", err)
	}
	return nil
}

func (s *WAV) writeHeader() error {
	data := uint32(s.frames * 4)
	h := make([]byte, 0, wavHeaderSize)
	h = append(h, "RIFF"...)
	h = binary.LittleEndian.AppendUint32(h, 36+data)
	h = append(h, "WAVEfmt "...)
	h = binary.LittleEndian.AppendUint32(h, 16)
	h = binary.LittleEndian.AppendUint16(h, 1) // PCM
	h = binary.LittleEndian.AppendUint16(h, 2)
	h = binary.LittleEndian.AppendUint32(h, uint32(s.rate))
	h = binary.LittleEndian.AppendUint32(h, uint32(s.rate*4))
	h = binary.LittleEndian.AppendUint16(h, 4)
	h = binary.LittleEndian.AppendUint16(h, 16)
	h = append(h, "data"...)
	h = binary.LittleEndian.AppendUint32(h, data)
	if _, err := s.w.Write(h); err != nil {
		return fmt.Errorf("wav sink: %w", err)
	}
	return nil
}
