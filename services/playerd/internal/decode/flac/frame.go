package flac

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// errFrame reports a frame that does not decode: a bad header, a reserved
// value, a CRC mismatch or bits past its end.
var errFrame = errors.New("flac: damaged frame")

// header is a frame header (RFC 9639, section 9.1).
type header struct {
	variable  bool
	blockSize int
	rate      int
	channels  int
	assign    int // 0..7 independent, 8 left/side, 9 side/right, 10 mid/side
	bps       int
	number    uint64 // frame number (fixed) or first sample (variable)
	size      int    // bytes, CRC-8 included
}

var blockSizes = [16]int{0, 192, 576, 1152, 2304, 4608, -1, -2, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768}
var sampleRates = [12]int{0, 88200, 176400, 192000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000}
var sampleSizes = [8]int{0, 8, 12, -1, 16, 20, 24, 32}

// parseHeader reads the header at b[0:]; ok is false when it is not one or
// its CRC-8 does not match. info fills the values the header leaves to it.
func parseHeader(b []byte, info *StreamInfo, lax bool) (h header, ok bool) {
	if len(b) < 6 || b[0] != 0xFF || b[1]&0xFE != 0xF8 {
		return h, false
	}
	h.variable = b[1]&1 != 0
	bsCode, rateCode := b[2]>>4, b[2]&15
	chCode, bpsCode := b[3]>>4, b[3]>>1&7
	if bsCode == 0 || rateCode == 15 || chCode > 10 || bpsCode == 3 || b[3]&1 != 0 {
		return h, false
	}
	// The coded number: UTF-8's scheme stretched to 36 bits.
	p := 4
	c := b[p]
	p++
	var n uint64
	var extra int
	switch {
	case c < 0x80:
		n = uint64(c)
	case c&0xE0 == 0xC0:
		n, extra = uint64(c&0x1F), 1
	case c&0xF0 == 0xE0:
		n, extra = uint64(c&0x0F), 2
	case c&0xF8 == 0xF0:
		n, extra = uint64(c&0x07), 3
	case c&0xFC == 0xF8:
		n, extra = uint64(c&0x03), 4
	case c&0xFE == 0xFC:
		n, extra = uint64(c&0x01), 5
	case c == 0xFE:
		n, extra = 0, 6
	default:
		return h, false
	}
	if !h.variable && extra > 5 {
		return h, false
	}
	if len(b) < p+extra+5 {
		return h, false
	}
	for range extra {
		c = b[p]
		if c&0xC0 != 0x80 {
			return h, false
		}
		n = n<<6 | uint64(c&0x3F)
		p++
	}
	h.number = n
	switch bs := blockSizes[bsCode]; bs {
	case -1:
		h.blockSize = int(b[p]) + 1
		p++
	case -2:
		h.blockSize = (int(b[p])<<8 | int(b[p+1])) + 1
		p += 2
	default:
		h.blockSize = bs
	}
	switch {
	case rateCode == 0:
		h.rate = info.SampleRate
	case rateCode < 12:
		h.rate = sampleRates[rateCode]
	case rateCode == 12:
		h.rate = int(b[p]) * 1000
		p++
	case rateCode == 13:
		h.rate = int(b[p])<<8 | int(b[p+1])
		p += 2
	default:
		h.rate = (int(b[p])<<8 | int(b[p+1])) * 10
		p += 2
	}
	if crc8(b[:p]) != b[p] && !lax {
		return h, false
	}
	h.size = p + 1
	h.assign = int(chCode)
	h.channels = int(chCode) + 1
	if chCode >= 8 {
		h.channels = 2
	}
	h.bps = sampleSizes[bpsCode]
	if bpsCode == 0 {
		h.bps = info.BitsPerSample
	}
	return h, true
}

// firstSample is where the frame starts in the stream.
func (h *header) firstSample(info *StreamInfo) uint64 {
	if h.variable {
		return h.number
	}
	return h.number * uint64(info.MaxBlock)
}

// frameDecoder holds the buffers one frame decodes into, reused frame after
// frame so steady decoding allocates nothing.
type frameDecoder struct {
	lax  bool // the fuzz target's: no CRC checks, so mutations reach the subframes
	br   bitReader
	pcm  [8][]int32
	wide []int64 // the side channel of 32-bit audio, which needs 33 bits
}

func (f *frameDecoder) grow(n, channels int) {
	for i := range channels {
		if cap(f.pcm[i]) < n {
			f.pcm[i] = make([]int32, n)
		}
	}
}

// decode decodes the frame at b (which starts with h), checks its CRC-16
// and returns its length in bytes. On success f.pcm[:h.channels] hold
// h.blockSize samples each.
func (f *frameDecoder) decode(b []byte, h *header) (int, error) {
	n := h.blockSize
	f.grow(n, h.channels)
	br := &f.br
	br.reset(b[h.size:])
	side := -1
	switch h.assign {
	case 8, 10:
		side = 1
	case 9:
		side = 0
	}
	for ch := range h.channels {
		bps := h.bps
		if ch == side {
			bps++
		}
		out := f.pcm[ch][:n]
		if bps > 32 {
			if cap(f.wide) < n {
				f.wide = make([]int64, n)
			}
			if err := subframe(br, f.wide[:n], bps); err != nil {
				return 0, err
			}
			continue
		}
		if err := subframe(br, out, bps); err != nil {
			return 0, err
		}
	}
	br.align()
	end := h.size + br.consumed() + 2
	if br.overrun() || end > len(b) {
		return 0, fmt.Errorf("%w: truncated", errFrame)
	}
	if crc16(b[:end-2]) != uint16(b[end-2])<<8|uint16(b[end-1]) && !f.lax {
		return 0, fmt.Errorf("%w: CRC-16", errFrame)
	}
	f.decorrelate(h, side)
	if h.bps < 32 {
		// A frame whose samples leave the stream's range breaks the format
		// (its CRC may hold all the same): it is damage, not audio.
		sh := uint(h.bps - 1)
		for ch := range h.channels {
			var bad int32
			for _, v := range f.pcm[ch][:n] {
				bad |= v>>sh ^ v>>31
			}
			if bad != 0 {
				return 0, fmt.Errorf("%w: samples beyond %d bits", errFrame, h.bps)
			}
		}
	}
	return end, nil
}

func (f *frameDecoder) decorrelate(h *header, side int) {
	n := h.blockSize
	if side < 0 {
		return
	}
	l, r := f.pcm[0][:n], f.pcm[1][:n]
	if h.bps == 32 {
		// 32-bit audio: the side channel is in f.wide, the other in pcm.
		s := f.wide[:n]
		switch h.assign {
		case 8:
			for i := range s {
				r[i] = int32(int64(l[i]) - s[i])
			}
		case 9:
			for i := range s {
				l[i] = int32(s[i] + int64(r[i]))
			}
		case 10:
			for i := range s {
				m := int64(l[i])<<1 | s[i]&1
				l[i], r[i] = int32((m+s[i])>>1), int32((m-s[i])>>1)
			}
		}
		return
	}
	switch h.assign {
	case 8:
		for i := range r {
			r[i] = l[i] - r[i]
		}
	case 9:
		for i := range l {
			l[i] += r[i]
		}
	case 10:
		// 32-bit arithmetic suffices: mid and side have at most 25 bits.
		for i := range l {
			m, s := l[i]<<1|r[i]&1, r[i]
			l[i], r[i] = (m+s)>>1, (m-s)>>1
		}
	}
}

type sample interface{ int32 | int64 }

// subframe decodes one channel's subframe (RFC 9639, section 9.2) of bps
// bits into out.
func subframe[T sample](br *bitReader, out []T, bps int) error {
	hdr := br.bits(8)
	if hdr&0x80 != 0 {
		return fmt.Errorf("%w: subframe padding", errFrame)
	}
	typ := hdr >> 1 & 0x3F
	wasted := 0
	if hdr&1 != 0 {
		wasted = int(br.unary()) + 1
		if wasted >= bps {
			return fmt.Errorf("%w: %d wasted bits of %d", errFrame, wasted, bps)
		}
		bps -= wasted
	}
	ubps := uint(bps)
	switch {
	case typ == 0:
		v := T(br.signed(ubps))
		for i := range out {
			out[i] = v
		}
	case typ == 1:
		for i := range out {
			out[i] = T(br.signed(ubps))
		}
	case typ >= 8 && typ <= 12:
		order := int(typ - 8)
		if order > len(out) {
			return fmt.Errorf("%w: order %d", errFrame, order)
		}
		for i := range order {
			out[i] = T(br.signed(ubps))
		}
		if err := residual(br, out, order); err != nil {
			return err
		}
		fixed(out, order)
	case typ >= 32:
		order := int(typ - 31)
		if order > len(out) {
			return fmt.Errorf("%w: order %d", errFrame, order)
		}
		for i := range order {
			out[i] = T(br.signed(ubps))
		}
		prec := uint(br.bits(4)) + 1
		if prec == 16 {
			return fmt.Errorf("%w: coefficient precision", errFrame)
		}
		shift := br.signed(5)
		if shift < 0 {
			return fmt.Errorf("%w: negative shift", errFrame) // RFC 9639 9.2.6: MUST NOT
		}
		var coef [32]int64
		for i := range order {
			coef[i] = br.signed(prec)
		}
		if err := residual(br, out, order); err != nil {
			return err
		}
		lpc(out, coef[:order], uint(shift))
	default:
		return fmt.Errorf("%w: reserved subframe type %d", errFrame, typ)
	}
	if wasted > 0 {
		for i := range out {
			out[i] <<= wasted
		}
	}
	return nil
}

// residual reads the coded residual (RFC 9639, section 9.2.7) into
// out[order:].
func residual[T sample](br *bitReader, out []T, order int) error {
	method := br.bits(2)
	if method > 1 {
		return fmt.Errorf("%w: reserved residual coding", errFrame)
	}
	pbits, escape := uint(4), uint64(15)
	if method == 1 {
		pbits, escape = 5, 31
	}
	porder := uint(br.bits(4))
	n := len(out)
	if n>>porder<<porder != n || n>>porder < order {
		return fmt.Errorf("%w: partition order %d", errFrame, porder)
	}
	part := n >> porder
	i := order
	for p := range 1 << porder {
		end := (p + 1) * part
		k := br.bits(pbits)
		if k == escape {
			w := uint(br.bits(5))
			for ; i < end; i++ {
				out[i] = T(br.signed(w))
			}
			continue
		}
		ku := uint(k)
		for i < end {
			// In runs, so that a frame cut short ends within a run rather
			// than after reading zeros for the rest of a 65535-sample block.
			run := min(end, i+256)
			riceRun(br, out[i:run], ku)
			i = run
			if br.p > len(br.b)+8 {
				return fmt.Errorf("%w: residual past the frame", errFrame)
			}
		}
	}
	return nil
}

// fixed undoes a fixed predictor (RFC 9639, section 9.2.5) in place: out
// holds the warm-up samples, then residuals.
func fixed[T sample](out []T, order int) {
	switch order {
	case 1:
		for i := 1; i < len(out); i++ {
			out[i] += out[i-1]
		}
	case 2:
		for i := 2; i < len(out); i++ {
			out[i] += 2*out[i-1] - out[i-2]
		}
	case 3:
		for i := 3; i < len(out); i++ {
			out[i] += 3*out[i-1] - 3*out[i-2] + out[i-3]
		}
	case 4:
		for i := 4; i < len(out); i++ {
			out[i] += 4*out[i-1] - 6*out[i-2] + 4*out[i-3] - out[i-4]
		}
	}
}

// lpc undoes a linear predictor in place with 64-bit sums: coef[0] belongs
// to the sample just before the predicted one.
func lpc[T sample](out []T, coef []int64, shift uint) {
	if lpcUnrolled(out, coef, shift) {
		return
	}
	order := len(coef)
	for i := order; i < len(out); i++ {
		w := out[i-order : i : i]
		var s int64
		for j, c := range coef {
			s += c * int64(w[order-1-j])
		}
		out[i] += T(s >> shift)
	}
}

// riceRun reads Rice codes of parameter k into out: the unary quotient, then
// k bits; the folded value unfolds to its sign. The cache word lives in
// registers here, which is most of the decoder's speed.
func riceRun[T sample](br *bitReader, out []T, k uint) {
	cache, n := br.cache, br.n
	for i := range out {
		if n < 32 {
			if br.p+8 <= len(br.b) {
				cache |= binary.BigEndian.Uint64(br.b[br.p:]) >> n
				adv := (63 - n) >> 3
				br.p += int(adv)
				n += adv << 3
			} else {
				br.cache, br.n = cache, n
				br.refill()
				cache, n = br.cache, br.n
			}
		}
		z := uint(bits.LeadingZeros64(cache))
		if z+1+k > n {
			// A quotient or remainder past the cache: the slow way.
			br.cache, br.n = cache, n
			q := br.unary()
			v := q<<k | br.bits(k)
			cache, n = br.cache, br.n
			out[i] = T(int64(v>>1) ^ -int64(v&1))
			continue
		}
		cache <<= z + 1
		v := uint64(z)<<k | cache>>(64-k)&(1<<k-1)
		cache <<= k
		n -= z + 1 + k
		out[i] = T(int64(v>>1) ^ -int64(v&1))
	}
	br.cache, br.n = cache, n
}
