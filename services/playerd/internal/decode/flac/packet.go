package flac

import (
	"fmt"
)

// ParseStreamInfo reads the 34-byte body of a STREAMINFO block.
func ParseStreamInfo(b []byte) (StreamInfo, error) {
	var in StreamInfo
	if len(b) != 34 {
		return in, fmt.Errorf("%w: STREAMINFO of %d bytes", ErrFormat, len(b))
	}
	err := in.parse(b)
	return in, err
}

// Frames decodes frames handed to it whole, one at a time: the audio of a
// container that carries a frame per packet (Ogg FLAC, RFC 9639 section
// 10.1). The container does the seeking.
type Frames struct {
	info StreamInfo
	f    frameDecoder
	out  [8][]int32
}

// NewFrames makes a decoder for the frames of the stream info describes.
func NewFrames(info StreamInfo) *Frames {
	fr := &Frames{info: info}
	fr.f.grow(info.MaxBlock, info.Channels)
	return fr
}

// Decode decodes the frame in b and returns its samples, one slice per
// channel, valid until the next call, and the stream position of its first
// sample. A damaged frame is an error wrapping ErrFormat; blockSize is then
// its length when its header held, else 0.
func (fr *Frames) Decode(b []byte) (pcm [][]int32, first uint64, blockSize int, err error) {
	h, ok := parseHeader(b, &fr.info, fr.f.lax)
	if !ok || h.channels != fr.info.Channels || h.bps != fr.info.BitsPerSample || h.blockSize > fr.info.MaxBlock {
		return nil, 0, 0, fmt.Errorf("%w: damaged frame header", ErrFormat)
	}
	first = h.firstSample(&fr.info)
	if _, err := fr.f.decode(b, &h); err != nil {
		return nil, first, h.blockSize, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	out := fr.out[:h.channels]
	for ch := range out {
		out[ch] = fr.f.pcm[ch][:h.blockSize]
	}
	return out, first, h.blockSize, nil
}
