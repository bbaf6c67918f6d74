package aac

import "encoding/binary"

// bitReader reads a frame most significant bit first. Reads past the end
// return zeros and set the position beyond the end, which the decoder checks
// once per element: a damaged frame fails cleanly without a bounds check on
// every codeword.
type bitReader struct {
	buf []byte
	pos int // in bits
	end int // len(buf)*8
}

func (b *bitReader) reset(p []byte) {
	b.buf, b.pos, b.end = p, 0, len(p)*8
}

// peek returns the next n bits (n <= 32) without consuming them.
func (b *bitReader) peek(n uint) uint32 {
	i := b.pos >> 3
	var w uint64
	if i+8 <= len(b.buf) {
		w = binary.BigEndian.Uint64(b.buf[i:])
	} else {
		for k := 0; k < 8; k++ {
			w <<= 8
			if i+k < len(b.buf) {
				w |= uint64(b.buf[i+k])
			}
		}
	}
	return uint32(w << uint(b.pos&7) >> (64 - n))
}

func (b *bitReader) skip(n uint) { b.pos += int(n) }

func (b *bitReader) read(n uint) uint32 {
	if n == 0 {
		return 0
	}
	v := b.peek(n)
	b.pos += int(n)
	return v
}

func (b *bitReader) bit() bool { return b.read(1) != 0 }

func (b *bitReader) left() int { return b.end - b.pos }

func (b *bitReader) overrun() bool { return b.pos > b.end }

func (b *bitReader) align() { b.pos = (b.pos + 7) &^ 7 }
