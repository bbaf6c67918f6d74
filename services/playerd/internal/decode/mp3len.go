package decode

import (
	"encoding/binary"
	"fmt"
	"io"
)

// An MP3 has no length field: go-mp3 learns it by reading every frame
// header at open, which for a three-minute track is 7,000 reads and most
// of a library scan. Encoders write the frame count into the first frame
// (Xing/Info by LAME and most others, VBRI by Fraunhofer's), and a
// constant-bitrate stream's frame count follows from its size. The count
// here is the one go-mp3's walk arrives at: every frame, the header frame
// included (it decodes as silence), samples per frame times frames.

// mp3Header is the first four bytes of an MPEG audio frame.
type mp3Header struct {
	lsf      bool // MPEG-2 or 2.5: half the samples per frame
	bitrate  int  // bits per second
	rate     int  // samples per second
	mono     bool
	padding  int
	sideInfo int // bytes of Layer III side information after the header
}

var mp3Bitrates = [2][16]int{
	{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, -1}, // MPEG-1 Layer III
	{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, -1},     // MPEG-2/2.5 Layer III
}

// parseMP3Header reads a Layer III frame header; ok is false for anything
// else, including free-format bitrates, which go-mp3 refuses.
func parseMP3Header(b []byte) (h mp3Header, ok bool) {
	if len(b) < 4 || b[0] != 0xff || b[1]&0xe0 != 0xe0 {
		return h, false
	}
	version, layer := b[1]>>3&3, b[1]>>1&3
	bri, sri := b[2]>>4, b[2]>>2&3
	if version == 1 || layer != 1 || sri == 3 || b[3]&3 == 2 {
		return h, false
	}
	h.lsf = version != 3
	lsf := 0
	if h.lsf {
		lsf = 1
	}
	h.bitrate = mp3Bitrates[lsf][bri] * 1000
	if h.bitrate <= 0 {
		return h, false
	}
	h.rate = [3]int{44100, 48000, 32000}[sri]
	switch version {
	case 2:
		h.rate /= 2
	case 0:
		h.rate /= 4
	}
	h.padding = int(b[2] >> 1 & 1)
	h.mono = b[3]>>6 == 3
	switch {
	case !h.lsf && h.mono:
		h.sideInfo = 17
	case !h.lsf:
		h.sideInfo = 32
	case h.mono:
		h.sideInfo = 9
	default:
		h.sideInfo = 17
	}
	return h, true
}

// samples is the number of samples a frame holds.
func (h mp3Header) samples() int {
	if h.lsf {
		return 576
	}
	return 1152
}

// size is the frame's length in bytes, as go-mp3 works it out. For
// MPEG-2 with padding that is a byte short of the standard's; on such a
// file (LAME, 22.05 kHz, 32 kbit/s) go-mp3's walk counted one frame fewer
// than the Info header, so the library shows 26 ms more than the player.
func (h mp3Header) size() int {
	n := 144*h.bitrate/h.rate + h.padding
	if h.lsf {
		n >>= 1
	}
	return n
}

// same tells frames of one stream apart from a chance sync pattern.
func (h mp3Header) same(o mp3Header) bool {
	return h.lsf == o.lsf && h.rate == o.rate && h.mono == o.mono
}

// mp3Duration is the duration from the first frame's header; ok is false
// when it cannot be told without the walk.
func mp3Duration(src *source) (float64, bool, error) {
	first, err := skipID3v2(src)
	if err != nil {
		return 0, false, fmt.Errorf("mp3: %w", err)
	}
	if first >= src.size {
		return 0, false, fmt.Errorf("mp3: %w: ID3v2 tag of %d bytes in a file of %d", ErrCorrupt, first, src.size)
	}
	var b [192]byte
	n, err := src.ReadAt(b[:], first)
	if err != nil && err != io.EOF {
		return 0, false, fmt.Errorf("mp3: %w", err)
	}
	h, ok := parseMP3Header(b[:n])
	if !ok {
		return 0, false, nil // padding after the tag, another layer: the walk finds the frames
	}
	end := mp3AudioEnd(src, first)
	frames := func(n int64) float64 { return float64(n*int64(h.samples())) / float64(h.rate) }
	if x := 4 + h.sideInfo; x+16 <= n && (string(b[x:x+4]) == "Xing" || string(b[x:x+4]) == "Info") {
		flags := binary.BigEndian.Uint32(b[x+4:])
		if flags&1 == 0 {
			return mp3CBR(src, h, first, end)
		}
		count := int64(binary.BigEndian.Uint32(b[x+8:]))
		// The stream's byte count, when given, must match the file: a
		// truncated or appended-to file's count is wrong.
		if flags&2 != 0 && !near(int64(binary.BigEndian.Uint32(b[x+12:])), end-first, h) {
			return 0, false, nil
		}
		return frames(count + 1), true, nil
	}
	if n >= 36+18 && string(b[36:40]) == "VBRI" {
		if !near(int64(binary.BigEndian.Uint32(b[46:])), end-first, h) {
			return 0, false, nil
		}
		return frames(int64(binary.BigEndian.Uint32(b[50:])) + 1), true, nil
	}
	return mp3CBR(src, h, first, end)
}

// near reports whether a header's byte count is the stream's, give or take
// the frame or two and the trailing tags encoders differ on.
func near(declared, actual int64, h mp3Header) bool {
	slack := 2*int64(h.size()) + 128 + actual/200
	return declared >= actual-slack && declared <= actual+slack
}

// mp3AudioEnd is where the frames end: before an ID3v1 tag and an APEv2 tag
// at the end of the file.
func mp3AudioEnd(src *source, first int64) int64 {
	end := src.size
	var t [3]byte
	if end-first >= 128 {
		if _, err := src.ReadAt(t[:], end-128); err == nil && string(t[:]) == "TAG" {
			end -= 128
		}
	}
	var ape [32]byte
	if end-first >= 32 {
		if _, err := src.ReadAt(ape[:], end-32); err == nil && string(ape[:8]) == "APETAGEX" {
			size := int64(binary.LittleEndian.Uint32(ape[12:])) // items and footer
			if binary.LittleEndian.Uint32(ape[20:])&(1<<31) != 0 {
				size += 32 // and a header
			}
			if size <= end-first {
				end -= size
			}
		}
	}
	return end
}

// mp3CBR counts the frames of a stream without a frame count from its size,
// once frames a third, half and two thirds of the way in have the first
// frame's bitrate; a variable bitrate needs the walk.
func mp3CBR(src *source, h mp3Header, first, end int64) (float64, bool, error) {
	span := end - first
	for _, at := range []int64{span / 3, span / 2, span * 2 / 3} {
		o, ok := mp3FrameNear(src, first+at, end)
		if !ok || !o.same(h) || o.bitrate != h.bitrate {
			return 0, false, nil
		}
	}
	// The frames average 144·bitrate/rate bytes (72 for MPEG-2); a last
	// frame cut short still counts, as in the walk.
	per := int64(144 * h.bitrate)
	if h.lsf {
		per /= 2
	}
	count := (span*int64(h.rate) + per - 1) / per
	return float64(count*int64(h.samples())) / float64(h.rate), true, nil
}

// mp3FrameNear finds the first frame at or after off: a header followed by
// another of the same stream one frame length further on.
func mp3FrameNear(src *source, off, end int64) (mp3Header, bool) {
	const window = 4096 // more than two of the largest frames (1,441 bytes)
	buf := make([]byte, min(window, end-off))
	n, _ := src.ReadAt(buf, off)
	buf = buf[:n]
	for i := 0; i+4 <= len(buf); i++ {
		h, ok := parseMP3Header(buf[i:])
		if !ok {
			continue
		}
		j := i + h.size()
		if j+4 > len(buf) {
			break
		}
		if o, ok := parseMP3Header(buf[j:]); ok && o.same(h) {
			return h, true
		}
	}
	return mp3Header{}, false
}
