package decode

import (
	"errors"
	"fmt"
	"io"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/playerd/internal/decode/mp3"
)

// MP3 is decoded by our own decoder (package mp3), which reads the file
// itself, a few seconds at a time, skips its tags, trims the encoder delay
// and padding a LAME header names and seeks to the sample.

func openMP3(src *source) (beep.StreamSeekCloser, beep.Format, error) {
	d, err := mp3.NewFile(src, src.size)
	if err != nil {
		return nil, beep.Format{}, mp3Error(err)
	}
	format := beep.Format{SampleRate: beep.SampleRate(d.SampleRate()), NumChannels: d.Channels(), Precision: 2}
	return &mp3Stream{d: d, closer: src}, format, nil
}

// mp3Error gives what the decoder reports the boundary's kinds: input that
// is not MP3 or lies about itself is damaged; a read error is what it is.
func mp3Error(err error) error {
	if errors.Is(err, mp3.ErrNoFrames) || errors.Is(err, mp3.ErrTag) {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return fmt.Errorf("mp3: %w", err)
}

// mp3Stream is a decoder as a beep stream.
type mp3Stream struct {
	d      *mp3.Decoder
	closer io.Closer // nil for a live stream
	err    error
}

func (s *mp3Stream) Stream(samples [][2]float64) (int, bool) {
	if s.err != nil {
		return 0, false
	}
	n, err := s.d.ReadStereo(samples)
	if err == nil && n < len(samples) {
		// A short read ends a beep stream (a resampler in front of a
		// station takes it as the end): its reason must come with it, or a
		// stalled server reads as one that closed the stream.
		_, err = s.d.ReadStereo(nil)
	}
	if err != nil && err != io.EOF {
		s.err = mp3Error(err)
	}
	return n, n > 0
}

func (s *mp3Stream) Err() error { return s.err }

func (s *mp3Stream) Len() int { return int(s.d.Length()) }

func (s *mp3Stream) Position() int { return int(s.d.Position()) }

func (s *mp3Stream) Seek(p int) error {
	if err := s.d.SeekSample(int64(p)); err != nil {
		return mp3Error(err)
	}
	return nil
}

func (s *mp3Stream) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}
