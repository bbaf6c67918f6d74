package decode

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gopxl/beep/v2"
	"github.com/gopxl/beep/v2/wav"
)

// beep's WAV decoder (v2.1.1) trusts every size in the header: a fmt chunk
// shorter than 16 bytes makes it read the next chunk size from the middle
// of the data and panic in makeslice (wav/decode.go:128), a large fmt or
// unknown chunk size allocates that much (decode.go:109, :128), a zero
// block align divides by zero in Len, and a block align that does not match
// channels × bits indexes past its buffer in Stream. So the boundary walks
// the chunks itself and hands beep a canonical 44-byte header written from
// checked values, followed by the data chunk clipped to the file.

const (
	wavMaxChunks = 4096
	wavHeadBytes = 44
)

func openWAV(src *source) (beep.StreamSeekCloser, beep.Format, error) {
	head, off, n, err := checkWAV(src)
	if err != nil {
		return nil, beep.Format{}, fmt.Errorf("wav: %w", err)
	}
	return wav.Decode(newSpliced(head, src, off, n))
}

type wavFormat struct {
	channels, rate, bits int
}

// checkWAV returns the canonical header and the data chunk's place.
func checkWAV(src *source) (head []byte, dataOff, dataLen int64, err error) {
	size := src.size
	var riff [12]byte
	if _, err := src.ReadAt(riff[:], 0); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: truncated header", ErrCorrupt)
	}
	if string(riff[:4]) != "RIFF" || string(riff[8:]) != "WAVE" {
		return nil, 0, 0, ErrUnsupported
	}
	var f *wavFormat
	off := int64(12)
	for range wavMaxChunks {
		var ch [8]byte
		if _, err := src.ReadAt(ch[:], off); err != nil {
			return nil, 0, 0, fmt.Errorf("%w: no data chunk", ErrCorrupt)
		}
		id, n := string(ch[:4]), int64(binary.LittleEndian.Uint32(ch[4:]))
		body := off + 8
		switch id {
		case "fmt ":
			if n < 16 || n > 1024 || body+n > size {
				return nil, 0, 0, fmt.Errorf("%w: fmt chunk of %d bytes", ErrCorrupt, n)
			}
			b := make([]byte, n)
			if _, err := src.ReadAt(b, body); err != nil {
				return nil, 0, 0, fmt.Errorf("%w: truncated fmt chunk", ErrCorrupt)
			}
			if f, err = parseWAVFormat(b); err != nil {
				return nil, 0, 0, err
			}
		case "data":
			if f == nil {
				return nil, 0, 0, fmt.Errorf("%w: data before fmt", ErrCorrupt)
			}
			frame := int64(f.channels * f.bits / 8)
			// Writers that stream set the size to 0xFFFFFFFF; a truncated
			// file has less than it says. Either way the file decides, and
			// beep counts in int32 including the header.
			n = min(n, size-body, math.MaxInt32-wavHeadBytes)
			n -= n % frame
			if n <= 0 {
				return nil, 0, 0, fmt.Errorf("%w: no audio data", ErrCorrupt)
			}
			return canonicalWAV(*f, n), body, n, nil
		}
		off = body + n + n&1
		if off >= size {
			break
		}
	}
	return nil, 0, 0, fmt.Errorf("%w: no data chunk", ErrCorrupt)
}

var pcmGUID = []byte{0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}

func parseWAVFormat(b []byte) (*wavFormat, error) {
	le := binary.LittleEndian
	tag := le.Uint16(b[0:])
	f := &wavFormat{channels: int(le.Uint16(b[2:])), rate: int(le.Uint32(b[4:])), bits: int(le.Uint16(b[14:]))}
	align := int(le.Uint16(b[12:]))
	switch tag {
	case 1: // PCM
	case 0xFFFE: // WAVE_FORMAT_EXTENSIBLE, which must carry PCM
		if len(b) < 40 || !bytes.Equal(b[24:40], pcmGUID) {
			return nil, fmt.Errorf("%w: wav sub-format other than PCM", ErrUnsupported)
		}
	default:
		return nil, fmt.Errorf("%w: wav format %#x", ErrUnsupported, tag)
	}
	if f.bits != 8 && f.bits != 16 && f.bits != 24 {
		return nil, fmt.Errorf("%w: %d bits per sample", ErrUnsupported, f.bits)
	}
	if f.channels < 1 || f.channels > 8 || f.rate < 1000 || f.rate > 768000 || align != f.channels*f.bits/8 {
		return nil, fmt.Errorf("%w: %d channels, %d Hz, block align %d", ErrCorrupt, f.channels, f.rate, align)
	}
	return f, nil
}

func canonicalWAV(f wavFormat, n int64) []byte {
	h := make([]byte, 0, wavHeadBytes)
	le := binary.LittleEndian
	frame := f.channels * f.bits / 8
	h = append(h, "RIFF"...)
	h = le.AppendUint32(h, uint32(36+n))
	h = append(h, "WAVEfmt "...)
	h = le.AppendUint32(h, 16)
	h = le.AppendUint16(h, 1)
	h = le.AppendUint16(h, uint16(f.channels))
	h = le.AppendUint32(h, uint32(f.rate))
	h = le.AppendUint32(h, uint32(f.rate*frame))
	h = le.AppendUint16(h, uint16(frame))
	h = le.AppendUint16(h, uint16(f.bits))
	h = append(h, "data"...)
	h = le.AppendUint32(h, uint32(n))
	return h
}
