package flac

import (
	"encoding/binary"
	"math/bits"
)

// bitReader reads MSB-first from a byte slice through a 64-bit cache word.
// Past the end it reads zeros and counts them, so a loop cannot run away on
// a truncated frame and the caller learns of it from overrun.
type bitReader struct {
	b     []byte
	p     int    // next byte to load; may pass len(b) by the zeros read
	cache uint64 // unread bits, left-aligned; bits past n are the next bits or zero
	n     uint   // valid bits in cache
}

func (r *bitReader) reset(b []byte) { *r = bitReader{b: b} }

func (r *bitReader) refill() {
	if r.p+8 <= len(r.b) {
		r.cache |= binary.BigEndian.Uint64(r.b[r.p:]) >> r.n
		adv := (63 - r.n) >> 3
		r.p += int(adv)
		r.n += adv << 3
		return
	}
	for r.n <= 56 {
		if r.p < len(r.b) {
			r.cache |= uint64(r.b[r.p]) << (56 - r.n)
		}
		r.p++
		r.n += 8
	}
}

// bits reads k ≤ 32 bits.
func (r *bitReader) bits(k uint) uint64 {
	if k == 0 {
		return 0
	}
	if r.n < k {
		r.refill()
	}
	v := r.cache >> (64 - k)
	r.cache <<= k
	r.n -= k
	return v
}

// signed reads a k-bit two's complement number, k ≤ 33.
func (r *bitReader) signed(k uint) int64 {
	if k == 0 {
		return 0
	}
	var v uint64
	if k > 32 {
		v = r.bits(k-32) << 32
		v |= r.bits(32)
	} else {
		v = r.bits(k)
	}
	return int64(v<<(64-k)) >> (64 - k)
}

// unary counts zero bits up to the next one bit, which it consumes.
func (r *bitReader) unary() uint64 {
	var q uint64
	for {
		if r.n == 0 {
			r.refill()
		}
		z := uint(bits.LeadingZeros64(r.cache))
		if z < r.n {
			r.cache <<= z + 1
			r.n -= z + 1
			return q + uint64(z)
		}
		q += uint64(r.n)
		r.cache, r.n = 0, 0
		if r.p > len(r.b)+8 {
			return q
		}
	}
}

// align drops the bits up to the next byte boundary.
func (r *bitReader) align() { r.bits(r.n & 7) }

// consumed is the number of bytes read after align.
func (r *bitReader) consumed() int { return r.p - int(r.n>>3) }

// overrun reports reading past the end.
func (r *bitReader) overrun() bool { return r.p-int(r.n>>3) > len(r.b) }

var crc8Table, crc16Table = func() (t8 [256]uint8, t16 [8][256]uint16) {
	for i := range 256 {
		c := uint8(i)
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
		t8[i] = c
		d := uint16(i) << 8
		for range 8 {
			if d&0x8000 != 0 {
				d = d<<1 ^ 0x8005
			} else {
				d <<= 1
			}
		}
		t16[0][i] = d
	}
	for i := range 256 {
		for k := 1; k < 8; k++ {
			prev := t16[k-1][i]
			t16[k][i] = prev<<8 ^ t16[0][prev>>8]
		}
	}
	return
}()

func crc8(b []byte) uint8 {
	var c uint8
	for _, x := range b {
		c = crc8Table[c^x]
	}
	return c
}

// crc16 is the frame's CRC (polynomial 0x8005, no reflection), eight bytes
// at a step.
func crc16(b []byte) uint16 {
	var c uint16
	for len(b) >= 8 {
		t := &crc16Table
		c = t[7][b[0]^byte(c>>8)] ^ t[6][b[1]^byte(c)] ^ t[5][b[2]] ^ t[4][b[3]] ^
			t[3][b[4]] ^ t[2][b[5]] ^ t[1][b[6]] ^ t[0][b[7]]
		b = b[8:]
	}
	for _, x := range b {
		c = c<<8 ^ crc16Table[0][byte(c>>8)^x]
	}
	return c
}
