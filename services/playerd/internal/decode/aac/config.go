package aac

import (
	"errors"
	"fmt"
)

// ErrUnsupported reports a stream this decoder does not decode (an object
// type other than AAC-LC, a 960-sample frame, several raw blocks per ADTS
// frame); ErrCorrupt a stream that contradicts the syntax.
var (
	ErrUnsupported = errors.New("aac: unsupported stream")
	ErrCorrupt     = errors.New("aac: damaged stream")
)

// Object types of ISO/IEC 14496-3 table 1.1 that matter here.
const (
	aotMain = 1
	aotLC   = 2
	aotSBR  = 5
	aotPS   = 29
)

// Config is what a decoder needs to know before the first frame, from an
// AudioSpecificConfig or an ADTS header.
type Config struct {
	ObjectType int // of the core: 2 for AAC-LC
	RateIndex  int // sampling_frequency_index of the core, 0..12
	SampleRate int // of the core, in Hz
	Channels   int // channel_configuration; 0 means defined by the stream's elements
	// SBR and PS tell that the stream carries HE-AAC (v2) extensions, which
	// this decoder skips: it plays the AAC-LC core at the core rate.
	SBR, PS bool
}

// OutputChannels is how many channels the decoder's output has: 1 or 2
// (of a stream with more, the first pair).
func (c Config) OutputChannels() int {
	if c.Channels == 1 {
		return 1
	}
	return 2
}

func (c Config) check() error {
	if c.ObjectType != aotLC {
		return fmt.Errorf("%w: audio object type %d (only AAC-LC, HE-AAC and HE-AACv2 play)", ErrUnsupported, c.ObjectType)
	}
	if c.RateIndex < 0 || c.RateIndex >= len(sampleRates) || c.SampleRate <= 0 {
		return fmt.Errorf("%w: sampling frequency index %d", ErrCorrupt, c.RateIndex)
	}
	if c.Channels > 7 {
		return fmt.Errorf("%w: channel configuration %d", ErrUnsupported, c.Channels)
	}
	return nil
}

// rateIndex maps an explicit sampling frequency to the index whose tables
// it uses (ISO/IEC 14496-3 table 4.82).
func rateIndex(f int) int {
	for i, lim := range []int{92017, 75132, 55426, 46009, 37566, 27713, 23004, 18783, 13856, 11502, 9391} {
		if f >= lim {
			return i
		}
	}
	return 11
}

// ParseASC reads an AudioSpecificConfig (14496-3 1.6.2.1; an MP4 esds's
// decoder specific info), explicit and backward-compatible HE-AAC
// signalling included (1.6.5).
func ParseASC(p []byte) (Config, error) {
	var b bitReader
	b.reset(p)
	var c Config
	aot := readAOT(&b)
	c.RateIndex, c.SampleRate = readRate(&b)
	c.Channels = int(b.read(4))
	if aot == aotSBR || aot == aotPS {
		c.SBR, c.PS = true, aot == aotPS
		readRate(&b) // the SBR output rate; the core's is the one that plays
		aot = readAOT(&b)
	}
	c.ObjectType = aot
	if aot == aotLC || aot == aotMain {
		if b.bit() {
			return c, fmt.Errorf("%w: 960-sample frames", ErrUnsupported)
		}
		if b.bit() { // dependsOnCoreCoder
			b.skip(14)
		}
		ext := b.bit()
		if c.Channels == 0 {
			var pce programConfig
			if err := pce.parse(&b); err != nil {
				return c, err
			}
			c.Channels = pce.channels()
		}
		if ext {
			b.skip(1) // extensionFlag3
		}
		// Backward-compatible signalling: a sync extension after the
		// core's config.
		if !c.SBR && b.left() >= 16 && b.peek(11) == 0x2b7 {
			b.skip(11)
			if readAOT(&b) == aotSBR && b.bit() {
				c.SBR = true
				readRate(&b)
				if b.left() >= 12 && b.peek(11) == 0x548 {
					b.skip(11)
					c.PS = b.bit()
				}
			}
		}
	}
	if b.overrun() {
		return c, fmt.Errorf("%w: AudioSpecificConfig of %d bytes", ErrCorrupt, len(p))
	}
	return c, c.check()
}

func readAOT(b *bitReader) int {
	aot := int(b.read(5))
	if aot == 31 {
		aot = 32 + int(b.read(6))
	}
	return aot
}

func readRate(b *bitReader) (index, rate int) {
	i := int(b.read(4))
	if i == 15 {
		f := int(b.read(24))
		return rateIndex(f), f
	}
	if i >= len(sampleRates) {
		return i, 0
	}
	return i, sampleRates[i]
}

// ADTSHeader is a parsed ADTS frame header.
type ADTSHeader struct {
	Config
	FrameLength  int // bytes, header included
	HeaderLength int // 7, or 9 with a CRC
}

// ADTSHeaderSize is the most ParseADTS needs to see.
const ADTSHeaderSize = 9

// ParseADTS reads the header at the start of p (at least 7 bytes): the
// adts_fixed_header and adts_variable_header of 14496-3 1.A.2.2.
func ParseADTS(p []byte) (ADTSHeader, error) {
	var h ADTSHeader
	if len(p) < 7 || p[0] != 0xff || p[1]&0xf6 != 0xf0 {
		return h, fmt.Errorf("%w: no ADTS sync", ErrCorrupt)
	}
	h.HeaderLength = 7
	if p[1]&1 == 0 {
		h.HeaderLength = 9
	}
	h.ObjectType = int(p[2]>>6) + 1
	h.RateIndex = int(p[2] >> 2 & 0xf)
	if h.RateIndex < len(sampleRates) {
		h.SampleRate = sampleRates[h.RateIndex]
	}
	h.Channels = int(p[2]&1)<<2 | int(p[3]>>6)
	h.FrameLength = int(p[3]&3)<<11 | int(p[4])<<3 | int(p[5]>>5)
	if p[6]&3 != 0 {
		return h, fmt.Errorf("%w: %d raw data blocks in one ADTS frame", ErrUnsupported, p[6]&3+1)
	}
	if h.FrameLength < h.HeaderLength {
		return h, fmt.Errorf("%w: ADTS frame of %d bytes", ErrCorrupt, h.FrameLength)
	}
	return h, h.check()
}

// programConfig is a program_config_element (4.4.1.1), read to know the
// channels of a configuration-0 stream and to skip it in frames.
type programConfig struct {
	front, side, back, lfe     int
	frontCPE, sideCPE, backCPE int
}

func (pc *programConfig) channels() int {
	n := pc.front + pc.side + pc.back + pc.frontCPE + pc.sideCPE + pc.backCPE
	if n == 1 {
		return 1
	}
	return 2
}

func (pc *programConfig) parse(b *bitReader) error {
	b.skip(4 + 2 + 4) // element_instance_tag, object_type, sampling_frequency_index
	nf, ns, nb := int(b.read(4)), int(b.read(4)), int(b.read(4))
	nl, na, nc := int(b.read(2)), int(b.read(3)), int(b.read(4))
	if b.bit() { // mono_mixdown
		b.skip(4)
	}
	if b.bit() { // stereo_mixdown
		b.skip(4)
	}
	if b.bit() { // matrix_mixdown
		b.skip(3)
	}
	count := func(n int, single, pair *int) {
		for range n {
			if b.bit() {
				*pair++
			} else {
				*single++
			}
			b.skip(4)
		}
	}
	count(nf, &pc.front, &pc.frontCPE)
	count(ns, &pc.side, &pc.sideCPE)
	count(nb, &pc.back, &pc.backCPE)
	pc.lfe = nl
	b.skip(uint(nl*4 + na*4 + nc*5))
	b.align()
	n := b.read(8) // comment_field_bytes
	b.skip(uint(n) * 8)
	if b.overrun() {
		return fmt.Errorf("%w: program config element", ErrCorrupt)
	}
	return nil
}
