package mp3

// Channel modes of the frame header.
const (
	modeStereo = 0
	modeJoint  = 1
	modeDual   = 2
	modeMono   = 3
)

// header is a Layer III frame header (ISO/IEC 11172-3 2.4.1.3), with the
// MPEG-2 and MPEG-2.5 extensions.
type header struct {
	bits     uint32 // the four header bytes
	lsf      bool   // MPEG-2 or 2.5: one granule of 576 samples per frame
	mpeg25   bool
	crc      bool // a 16-bit CRC follows the header
	bitrate  int  // bits per second
	rateIdx  int  // 0..8, index into sampleRates and the band tables
	padding  int
	mode     int
	modeExt  int
	size     int // bytes of the whole frame
	sideInfo int // bytes of side information
}

// headerMask selects the bits of a header that stay the same in every frame
// of a stream: sync, version, layer and sampling frequency. Frames that
// differ there are not of this stream.
const headerMask = 0xfffe0c00

// parseHeader reads the four header bytes in h (big endian). ok is false
// for anything that is not a Layer III frame this decoder plays: other
// layers, reserved values, and the free format (bitrate_index 0), which
// needs the next frame to tell its length.
func parseHeader(h uint32) (hd header, ok bool) {
	if h&0xffe00000 != 0xffe00000 {
		return hd, false
	}
	// ID bit 19 (11172-3 2.4.2.3; 13818-3 uses 0 for the lower sampling
	// frequencies), and bit 20, which MPEG-2.5 clears (as mpg123 reads it).
	version := h >> 19 & 3 // 0: MPEG-2.5, 1: reserved, 2: MPEG-2, 3: MPEG-1
	layer := h >> 17 & 3   // 1: Layer III
	bri := int(h >> 12 & 15)
	sri := int(h >> 10 & 3)
	if version == 1 || layer != 1 || bri == 0 || bri == 15 || sri == 3 || h&3 == 2 {
		return hd, false
	}
	hd.bits = h
	hd.lsf = version != 3
	hd.mpeg25 = version == 0
	hd.crc = h>>16&1 == 0
	switch version {
	case 3:
		hd.rateIdx = sri
	case 2:
		hd.rateIdx = 3 + sri
	default:
		hd.rateIdx = 6 + sri
	}
	lsf := 0
	if hd.lsf {
		lsf = 1
	}
	hd.bitrate = bitrates[lsf][bri] * 1000
	hd.padding = int(h >> 9 & 1)
	hd.mode = int(h >> 6 & 3)
	hd.modeExt = int(h >> 4 & 3)
	// 1152 samples of 1/8 bit per byte for MPEG-1, 576 for MPEG-2 and 2.5:
	// 144 or 72 bytes per bit/s per Hz, then the padding byte (11172-3
	// 2.4.3.1, 13818-3 2.4.3.1; go-mp3 halved the padding for MPEG-2, a
	// byte short).
	if hd.lsf {
		hd.size = 72*hd.bitrate/sampleRates[hd.rateIdx] + hd.padding
	} else {
		hd.size = 144*hd.bitrate/sampleRates[hd.rateIdx] + hd.padding
	}
	switch {
	case !hd.lsf && hd.mode == modeMono:
		hd.sideInfo = 17
	case !hd.lsf:
		hd.sideInfo = 32
	case hd.mode == modeMono:
		hd.sideInfo = 9
	default:
		hd.sideInfo = 17
	}
	if hd.size < 4+hd.sideInfo+hd.crcBytes() {
		return hd, false
	}
	return hd, true
}

func (h header) crcBytes() int {
	if h.crc {
		return 2
	}
	return 0
}

func (h header) rate() int { return sampleRates[h.rateIdx] }

func (h header) channels() int {
	if h.mode == modeMono {
		return 1
	}
	return 2
}

// samples is the number of samples per channel a frame holds.
func (h header) samples() int {
	if h.lsf {
		return 576
	}
	return 1152
}

func (h header) granules() int {
	if h.lsf {
		return 1
	}
	return 2
}

// mainData is the number of main data bytes the frame carries.
func (h header) mainData() int { return h.size - 4 - h.crcBytes() - h.sideInfo }
