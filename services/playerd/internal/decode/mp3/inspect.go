package mp3

import (
	"encoding/binary"
	"errors"
	"io"
)

// Info is what a file's headers tell about its stream.
type Info struct {
	SampleRate int
	Channels   int
	// Samples is the number of samples per channel the stream plays,
	// after the encoder delay and padding a LAME header names; -1 when the
	// headers do not tell (a variable bitrate without a Xing or VBRI
	// header), which only a walk over every frame finds.
	Samples int64

	first  int64 // offset of the first frame, after any ID3v2 tag
	audio  int64 // offset of the first audio frame, after a Xing/Info/VBRI frame
	end    int64 // where the frames end, before ID3v1 and APE tags
	header header
	frames int64 // audio frames according to the header; -1 unknown
	delay  int64 // decoded samples to drop at the start
	pad    int64 // decoded samples to drop at the end
	// gapless tells that delay and Samples come from a LAME header.
	gapless bool
	// cbr tells that every frame has the first one's bitrate: LAME's Info
	// header says so, or frames through the file do.
	cbr bool
}

var (
	// ErrNoFrames reports input in which no MPEG audio Layer III frames
	// were found.
	ErrNoFrames = errors.New("mp3: no MPEG audio Layer III frames")
	// ErrTag reports an ID3v2 tag that claims more than the file holds.
	ErrTag = errors.New("mp3: ID3v2 tag larger than the file")
)

// decoderDelay is the delay of the synthesis filter bank and IMDCT that
// LAME's delay and padding figures leave out: 528 samples plus one, as
// LAME's header documentation and gapless decoders (mpg123, consulted for
// this behaviour) count it.
const decoderDelay = 529

// syncSearch bounds how far into a file the first frame is looked for
// after the tags: some files have padding or junk there, none megabytes.
const syncSearch = 1 << 20

// Inspect reads the headers of the file in r, size bytes long: tags,
// the first frame, a Xing/Info (with LAME extension) or VBRI header, and,
// for a file without one, whether its bitrate is constant. It reads a few
// KB.
func Inspect(r io.ReaderAt, size int64) (Info, error) {
	first, err := skipTags(r, size)
	if err != nil {
		return Info{}, err
	}
	end := audioEnd(r, first, size)
	var buf [4096]byte
	off, h, ok := findFrame(r, first, min(end, first+syncSearch), buf[:], 0)
	if !ok {
		return Info{}, ErrNoFrames
	}
	info := Info{SampleRate: h.rate(), Channels: h.channels(), first: off, audio: off, end: end, header: h, frames: -1, Samples: -1}
	n, _ := r.ReadAt(buf[:min(len(buf), h.size)], off)
	frame := buf[:n]
	if info.readXing(frame, true) || info.readVBRI(frame, true) {
		info.audio = off + int64(h.size)
		// A count of bytes that does not fit the file means the file was
		// cut or appended to after encoding: the frame count is wrong too.
		if info.frames >= 0 {
			info.Samples = info.frames*int64(h.samples()) - info.delay
			info.Samples = max(0, info.Samples-info.pad)
			return info, nil
		}
	}
	if frames, ok := cbrFrames(r, h, info.audio, end, buf[:]); ok {
		info.frames = frames
		info.Samples = max(0, frames*int64(h.samples())-info.delay)
		info.cbr = true
	}
	return info, nil
}

// readXing reads a Xing or Info header and its LAME extension from the
// first frame (after the side information). It sets frames (when the
// header counts them and, if checked, its byte count fits the file) and,
// from a LAME header, the delay and padding.
func (i *Info) readXing(frame []byte, check bool) bool {
	h := i.header
	for _, at := range []int{4 + h.sideInfo, 4 + 2 + h.sideInfo} {
		if at+8 > len(frame) {
			continue
		}
		tag := string(frame[at : at+4])
		if tag != "Xing" && tag != "Info" {
			continue
		}
		i.cbr = tag == "Info"
		flags := binary.BigEndian.Uint32(frame[at+4:])
		p := at + 8
		frames, bytes := int64(-1), int64(-1)
		if flags&1 != 0 && p+4 <= len(frame) {
			frames = int64(binary.BigEndian.Uint32(frame[p:]))
			p += 4
		}
		if flags&2 != 0 && p+4 <= len(frame) {
			bytes = int64(binary.BigEndian.Uint32(frame[p:]))
			p += 4
		}
		if flags&4 != 0 {
			p += 100 // table of contents
		}
		if flags&8 != 0 {
			p += 4 // quality
		}
		if !check || bytes < 0 || near(bytes, i.end-i.first, h) {
			i.frames = frames
		}
		// The LAME extension: encoder name (9), revision and method (1),
		// lowpass (1), ReplayGain (8), flags (1), bitrate (1), then the
		// encoder delay and padding, 12 bits each.
		if p+24 <= len(frame) {
			switch string(frame[p : p+4]) {
			case "LAME", "Lavf", "Lavc", "GOGO":
				d := frame[p+21:]
				i.delay = int64(d[0])<<4 | int64(d[1])>>4 + decoderDelay
				i.pad = int64(d[1]&15)<<8 | int64(d[2]) - decoderDelay
				i.gapless = true
				if i.frames < 0 {
					i.pad = 0 // the end is not known: keep every sample
				}
			}
		}
		return true
	}
	return false
}

// readVBRI reads the VBRI header of Fraunhofer's encoders, 32 bytes after
// the header whatever the mode: version, delay, quality, bytes, frames.
func (i *Info) readVBRI(frame []byte, check bool) bool {
	if len(frame) < 36+18 || string(frame[36:40]) != "VBRI" {
		return false
	}
	bytes := int64(binary.BigEndian.Uint32(frame[46:]))
	if !check || near(bytes, i.end-i.first, i.header) {
		i.frames = int64(binary.BigEndian.Uint32(frame[50:]))
	}
	return true
}

// near reports whether a header's byte count is the stream's, give or take
// the frame or two and the trailing tags encoders differ on.
func near(declared, actual int64, h header) bool {
	slack := 2*int64(h.size) + 128 + actual/200
	return declared >= actual-slack && declared <= actual+slack
}

// skipTags returns the offset after the ID3v2 tags at the start of r.
func skipTags(r io.ReaderAt, size int64) (int64, error) {
	var off int64
	for {
		var b [10]byte
		if n, _ := r.ReadAt(b[:], off); n < 10 {
			return off, nil
		}
		n, ok := id3Size(b[:])
		if !ok {
			return off, nil
		}
		off += n
		if off >= size {
			return 0, ErrTag
		}
	}
}

// id3Size is the size of the ID3v2 tag whose header is b, header and
// footer included.
func id3Size(b []byte) (int64, bool) {
	if len(b) < 10 || string(b[:3]) != "ID3" || b[3] == 0xff || b[4] == 0xff {
		return 0, false
	}
	var n int64
	for _, c := range b[6:10] {
		if c&0x80 != 0 {
			return 0, false
		}
		n = n<<7 | int64(c)
	}
	n += 10
	if b[5]&0x10 != 0 {
		n += 10 // footer
	}
	return n, true
}

// audioEnd is where the frames end: before an ID3v1 tag and an APEv2 tag
// at the end of the file.
func audioEnd(r io.ReaderAt, first, size int64) int64 {
	end := size
	var t [3]byte
	if end-first >= 128 {
		if _, err := r.ReadAt(t[:], end-128); err == nil && string(t[:]) == "TAG" {
			end -= 128
		}
	}
	var ape [32]byte
	if end-first >= 32 {
		if _, err := r.ReadAt(ape[:], end-32); err == nil && string(ape[:8]) == "APETAGEX" {
			n := int64(binary.LittleEndian.Uint32(ape[12:])) // items and footer
			if binary.LittleEndian.Uint32(ape[20:])&(1<<31) != 0 {
				n += 32 // and a header
			}
			if n <= end-first {
				end -= n
			}
		}
	}
	return end
}

// findFrame finds the first frame at or after off and before end that
// the next frame confirms (or that ends exactly at end); sig, when not 0,
// is the stream's header bits under headerMask.
func findFrame(r io.ReaderAt, off, end int64, buf []byte, sig uint32) (int64, header, bool) {
	for off < end {
		n, _ := r.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
		if n < 4 {
			break
		}
		b := buf[:n]
		for i := 0; i+4 <= len(b); i++ {
			if b[i] != 0xff {
				continue
			}
			v := binary.BigEndian.Uint32(b[i:])
			h, ok := parseHeader(v)
			if !ok || sig != 0 && v&headerMask != sig {
				continue
			}
			at := off + int64(i)
			next := at + int64(h.size)
			if next == end {
				return at, h, true
			}
			var nb [4]byte
			if k, _ := r.ReadAt(nb[:], next); k == 4 {
				w := binary.BigEndian.Uint32(nb[:])
				if _, ok := parseHeader(w); ok && w&headerMask == v&headerMask {
					return at, h, true
				}
			}
		}
		if n < len(buf) {
			break
		}
		off += int64(n - 3)
	}
	return 0, header{}, false
}

// cbrFrames counts the frames of a stream without a frame count from its
// size, once frames a third, half and two thirds of the way in have the
// first frame's bitrate; a variable bitrate needs the walk.
func cbrFrames(r io.ReaderAt, h header, first, end int64, buf []byte) (int64, bool) {
	span := end - first
	if span <= 0 {
		return 0, true
	}
	sig := uint32(0)
	var hb [4]byte
	if n, _ := r.ReadAt(hb[:], first); n == 4 {
		sig = binary.BigEndian.Uint32(hb[:]) & headerMask
	}
	for _, at := range []int64{span / 3, span / 2, span * 2 / 3} {
		_, o, ok := findFrame(r, first+at, min(end, first+at+int64(len(buf))), buf, sig)
		if !ok || o.bitrate != h.bitrate || o.channels() != h.channels() {
			return 0, false
		}
	}
	// The frames average 144·bitrate/rate bytes (72 for MPEG-2); a last
	// frame cut short still counts.
	per := int64(144 * h.bitrate)
	if h.lsf {
		per /= 2
	}
	return (span*int64(h.rate()) + per - 1) / per, true
}
