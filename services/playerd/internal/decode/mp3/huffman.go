package mp3

import (
	"encoding/binary"
	"math"
)

// Huffman decoding reads up to 57 bits at once from a big-endian 64-bit
// load and looks codes up several bits at a time: a first-level table
// indexed by the next firstBits bits, whose entries are either a value
// pair or a pointer to a smaller table for the bits after them.

// A lookup entry is a leaf, len<<8 | x<<4 | y with len the code's whole
// length, or a pointer, lutPointer | bits<<16 | offset, to the table of
// 2^bits entries at offset that the next bits index.
const lutPointer = 1 << 31

type huffTable struct {
	lut       []uint32
	firstBits uint
	linbits   uint
}

// bigTables are the 32 tables table_select chooses from; 0, 4 and 14 have
// no lut and decode as zeros without reading bits, as in other decoders.
var bigTables [32]huffTable

// quadA is count1 table A indexed by the next 6 bits: len<<4 | vwxy.
var quadA [64]uint8

// pow43 holds |i|^(4/3) for every value the big-values region can code:
// up to 15 + 2^13 - 1 with the largest linbits.
var pow43 [8207]float32

func init() {
	for t := range 32 {
		spec, ok := huffSpecs[t]
		switch {
		case t >= 24:
			spec, ok = huffSpecs[24], true
		case t >= 16:
			spec, ok = huffSpecs[16], true
		}
		if !ok {
			continue
		}
		bigTables[t] = huffTable{lut: buildLUT(spec), firstBits: firstBits(spec), linbits: uint(linbits[t])}
	}
	for v := range 16 {
		n := uint(quadALens[v])
		code := uint(quadACodes[v]) << (6 - n)
		for i := range uint(1) << (6 - n) {
			quadA[code|i] = uint8(n<<4 | uint(v))
		}
	}
	for i := range pow43 {
		pow43[i] = float32(math.Pow(float64(i), 4.0/3.0))
	}
}

// firstBits sizes a table's first level: the longest code, at most 8 bits,
// so the common short codes take one lookup and the table stays small.
func firstBits(spec huffSpec) uint {
	longest := uint8(0)
	for _, n := range spec.lens {
		longest = max(longest, n)
	}
	return uint(min(longest, 8))
}

type huffCode struct {
	code uint32
	n    uint // length in bits
	v    uint32
}

func buildLUT(spec huffSpec) []uint32 {
	codes := make([]huffCode, len(spec.codes))
	for i := range spec.codes {
		x, y := i/spec.size, i%spec.size
		codes[i] = huffCode{code: uint32(spec.codes[i]), n: uint(spec.lens[i]), v: uint32(x<<4 | y)}
	}
	bits := firstBits(spec)
	lut := make([]uint32, 1<<bits)
	return fillLUT(lut, 0, bits, 0, codes)
}

// fillLUT fills the table of 2^bits entries at off, for codes whose first
// used bits are already consumed, and appends the tables it points to.
func fillLUT(lut []uint32, off int, bits, used uint, codes []huffCode) []uint32 {
	groups := map[uint32][]huffCode{}
	for _, c := range codes {
		rest := c.n - used
		if rest <= bits {
			idx := (c.code & (1<<rest - 1)) << (bits - rest)
			for i := range uint32(1) << (bits - rest) {
				lut[off+int(idx|i)] = uint32(c.n)<<8 | c.v
			}
			continue
		}
		idx := c.code >> (rest - bits) & (1<<bits - 1)
		groups[idx] = append(groups[idx], c)
	}
	for idx := range uint32(1) << bits {
		group := groups[idx]
		if len(group) == 0 {
			continue
		}
		longest := uint(0)
		for _, c := range group {
			longest = max(longest, c.n-used-bits)
		}
		sub := min(longest, 6)
		at := len(lut)
		lut = append(lut, make([]uint32, 1<<sub)...)
		lut[off+int(idx)] = lutPointer | uint32(sub)<<16 | uint32(at)
		lut = fillLUT(lut, at, sub, used+bits, group)
	}
	return lut
}

// bitReader reads a big-endian bit stream from data, which holds at least
// 8 bytes beyond any position read, so loads need no length checks.
type bitReader struct {
	data []byte
	pos  int // bits
}

// read returns the next n bits, n at most 25.
func (b *bitReader) read(n uint) uint32 {
	i := b.pos >> 3
	v := binary.BigEndian.Uint32(b.data[i:i+4]) << (b.pos & 7)
	b.pos += int(n)
	return v >> (32 - n)
}

// peek returns the next 57 bits or more, left-aligned.
func (b *bitReader) peek() uint64 {
	i := b.pos >> 3
	return binary.BigEndian.Uint64(b.data[i:i+8]) << (b.pos & 7)
}

// signed gives v the sign bit s (0 or 1): a float's sign flipped.
func signed(v float32, s uint64) float32 {
	return math.Float32frombits(math.Float32bits(v) ^ uint32(s)<<31)
}

// readHuffman decodes the big values and count1 regions of a granule
// channel from the bits up to end into out, in bitstream order, as signed
// |v|^(4/3); it returns the number of values decoded, after which out is
// left untouched and counts as zero. limit is where the readable data ends:
// a corrupt part2_3_length cannot make it read past.
func readHuffman(br *bitReader, end, limit int, gc *granule, out *[576]float32) int {
	end = min(end, limit)
	n := 0
	big := min(gc.bigValues*2, 576)
	regions := [3]int{min(gc.region1, big), min(gc.region2, big), big}
	for r := range 3 {
		t := &bigTables[gc.tableSelect[r]]
		stop := regions[r]
		if t.lut == nil {
			for ; n < stop; n++ {
				out[n] = 0
			}
			continue
		}
		lut, first, lin := t.lut, t.firstBits, t.linbits
		for n < stop && br.pos < limit {
			w := br.peek()
			e := lut[w>>(64-first)]
			if e&lutPointer != 0 {
				used := first
				for e&lutPointer != 0 {
					sub := uint(e >> 16 & 31)
					e = lut[int(e&0xffff)+int(w<<used>>(64-sub))]
					used += sub
				}
			}
			l := uint(e >> 8 & 31)
			x, y := uint(e>>4&15), uint(e&15)
			w <<= l
			var vx, vy float32
			if x != 0 {
				if x == 15 && lin != 0 {
					x += uint(w >> (64 - lin))
					w <<= lin
					l += lin
				}
				vx = signed(pow43[x], w>>63)
				w <<= 1
				l++
			}
			if y != 0 {
				if y == 15 && lin != 0 {
					y += uint(w >> (64 - lin))
					w <<= lin
					l += lin
				}
				vy = signed(pow43[y], w>>63)
				l++
			}
			br.pos += int(l)
			out[n], out[n+1] = vx, vy
			n += 2
		}
		for ; n < stop; n++ { // the data ran out
			out[n] = 0
		}
	}
	// count1: quadruples of -1, 0, 1 until the granule's bits end. A
	// codeword that reaches the end, or a sign bit past it, is dropped,
	// as the reference decoders do.
	for n+4 <= 576 && br.pos < end {
		w := br.peek()
		var v, l uint
		if gc.count1Table == 0 {
			e := quadA[w>>58]
			v, l = uint(e&15), uint(e>>4)
		} else {
			v, l = uint(^w>>60&15), 4
		}
		if br.pos+int(l) >= end {
			break
		}
		w <<= l
		var q [4]float32
		stopped := false
		for i := range 4 {
			if v&(8>>i) == 0 {
				continue
			}
			if br.pos+int(l) >= end {
				stopped = true
				break
			}
			q[i] = signed(1, w>>63)
			w <<= 1
			l++
		}
		br.pos += int(l)
		out[n], out[n+1], out[n+2], out[n+3] = q[0], q[1], q[2], q[3]
		n += 4
		if stopped {
			break
		}
	}
	return n
}
