package output

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
)

// procAsound is where the kernel lists sound cards.
const procAsound = "/proc/asound"

// alsaOpener checks the device choice now and resolves it at every open, so a
// USB DAC that comes back under another card number is found again.
func alsaOpener(arg string) (Opener, error) {
	if _, err := alsa.ParseSpec(arg); err != nil {
		return nil, err
	}
	return func(rate int) (Sink, error) {
		s, err := OpenALSA(procAsound, arg, alsa.Config{Rate: rate, PeriodFrames: PeriodFrames})
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return s, nil
	}, nil
}

// OpenALSA opens the playback device spec names (see alsa.Find) as a Sink.
// Without a spec it takes the first playback device that takes a format the
// sink writes, so a board whose first card is, say, an HDMI port taking only
// IEC958 frames still plays on its headphone jack.
func OpenALSA(procDir, spec string, cfg alsa.Config) (*ALSA, error) {
	open := func(d alsa.Device) (pcm, error) { return alsa.Open(d.Path(), d.String(), cfg) }
	if spec == "" {
		devs, err := alsa.PlaybackDevices(procDir)
		if err != nil {
			return nil, lost(err)
		}
		p, err := openFirst(devs, open)
		if err != nil {
			return nil, lost(err)
		}
		return newALSA(p), nil
	}
	dev, err := alsa.Find(procDir, spec)
	if err != nil {
		return nil, lost(err)
	}
	p, err := open(dev)
	if err != nil {
		return nil, lost(err)
	}
	return newALSA(p), nil
}

// openFirst opens the first device that is not unsupported. Any other
// error (busy, gone) ends the search: playing elsewhere than on the device
// that would normally play would surprise more than an error does.
func openFirst(devs []alsa.Device, open func(alsa.Device) (pcm, error)) (pcm, error) {
	if len(devs) == 0 {
		return nil, fmt.Errorf("alsa: no playback device (is a sound card connected and enabled?): %w", alsa.ErrGone)
	}
	var skipped []error
	for _, d := range devs {
		p, err := open(d)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, alsa.ErrUnsupported) {
			return nil, err
		}
		skipped = append(skipped, err)
	}
	return nil, fmt.Errorf("alsa: no playback device takes S16, S24 or S32 PCM: %w", errors.Join(skipped...))
}

// pcm is the part of *alsa.PCM the sink uses; tests substitute a recorder.
type pcm interface {
	Format() alsa.Format
	Channels() int
	Rate() int
	Write(buf []byte) error
	Drop() error
	Drain() error
	Delay() (int, error)
	Rewind(frames int) (int, error)
	MaxRewind() int
	Buffer() int
	Underruns() int
	Close() error
}

// ALSA is a Sink on a kernel ALSA device. The device runs at the rate asked
// for when it offers it, otherwise at the nearest it offers, and the sink
// takes frames at that rate: the player converts what it plays to it, so
// device frames stay the player's frames (Delay, Rewind) and nothing is
// resampled twice.
type ALSA struct {
	pcm pcm
	buf []byte
}

func newALSA(p pcm) *ALSA { return &ALSA{pcm: p} }

// lost marks errors that mean the device is gone, so the player waits for
// it to come back instead of giving up.
func lost(err error) error {
	if errors.Is(err, alsa.ErrGone) {
		return fmt.Errorf("%w: %w", ErrDeviceLost, err)
	}
	return err
}

func (s *ALSA) Write(frames [][2]float64) error {
	s.buf = encode(s.buf[:0], s.pcm.Format(), s.pcm.Channels(), frames)
	return lost(s.pcm.Write(s.buf))
}

// encode converts frames to the device's format and channel layout: stereo
// as is, mono as the mean of both channels, more channels with silence after
// the first two.
//
// Every sample played passes here: stereo at 32 or 16 bits, what nearly
// every device takes, is written into a buffer grown once, without a
// closure's switch and an append per sample.
func encode(buf []byte, f alsa.Format, channels int, frames [][2]float64) []byte {
	le := binary.LittleEndian
	switch {
	case channels == 2 && f == alsa.S32LE:
		n := len(buf)
		buf = slices.Grow(buf, 8*len(frames))[:n+8*len(frames)]
		b := buf[n:]
		for i, fr := range frames {
			le.PutUint32(b[8*i:], uint32(ToS32(fr[0])))
			le.PutUint32(b[8*i+4:], uint32(ToS32(fr[1])))
		}
		return buf
	case channels == 2 && f == alsa.S16LE:
		n := len(buf)
		buf = slices.Grow(buf, 4*len(frames))[:n+4*len(frames)]
		b := buf[n:]
		for i, fr := range frames {
			le.PutUint16(b[4*i:], uint16(ToS16(fr[0])))
			le.PutUint16(b[4*i+2:], uint16(ToS16(fr[1])))
		}
		return buf
	}
	return encodeAny(buf, f, channels, frames)
}

// encodeAny is encode for every format and layout.
func encodeAny(buf []byte, f alsa.Format, channels int, frames [][2]float64) []byte {
	put := func(v float64) {
		switch f {
		case alsa.S32LE:
			buf = binary.LittleEndian.AppendUint32(buf, uint32(ToS32(v)))
		case alsa.S24LE:
			buf = binary.LittleEndian.AppendUint32(buf, uint32(ToS32(v)>>8))
		case alsa.S24Packed:
			x := uint32(ToS32(v) >> 8)
			buf = append(buf, byte(x), byte(x>>8), byte(x>>16))
		default:
			buf = binary.LittleEndian.AppendUint16(buf, uint16(ToS16(v)))
		}
	}
	for _, fr := range frames {
		if channels == 1 {
			put((fr[0] + fr[1]) / 2)
			continue
		}
		put(fr[0])
		put(fr[1])
		for range channels - 2 {
			put(0)
		}
	}
	return buf
}

// ToS32 is ToS16's counterpart for 32-bit devices: the extra bits keep
// quiet passages (low volume) free of audible quantisation. Scaled by 2^31,
// 16- and 24-bit samples come out as they were, shifted.
func ToS32(v float64) int32 {
	v = math.Round(v * (1 << 31))
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	if v < math.MinInt32 {
		return math.MinInt32
	}
	return int32(v)
}

// Drop silences the device at once; what was buffered is lost (see Delay).
func (s *ALSA) Drop() error { return lost(s.pcm.Drop()) }

// Drain plays out everything written.
func (s *ALSA) Drain() error { return lost(s.pcm.Drain()) }

// Delay reports the frames written but not heard yet.
func (s *ALSA) Delay() int {
	d, err := s.pcm.Delay()
	if err != nil {
		return 0 // the next Write reports the problem
	}
	return d
}

// Rewind takes back up to frames of written, unheard audio (Rewinder).
func (s *ALSA) Rewind(frames int) (int, error) {
	n, err := s.pcm.Rewind(frames)
	return n, lost(err)
}

// MaxRewind is the device buffer, or 0 where the driver cannot rewind.
func (s *ALSA) MaxRewind() int { return s.pcm.MaxRewind() }

// Capacity is the device buffer, which the player fills in batches (Filled).
func (s *ALSA) Capacity() int { return s.pcm.Buffer() }

func (s *ALSA) Close() error { return s.pcm.Close() }

// Rate is the rate the device runs at.
func (s *ALSA) Rate() int { return s.pcm.Rate() }

// Underruns counts the underruns the device recovered from.
func (s *ALSA) Underruns() int { return s.pcm.Underruns() }

// DeviceFormat is the sample format the device was opened with.
func (s *ALSA) DeviceFormat() alsa.Format { return s.pcm.Format() }
