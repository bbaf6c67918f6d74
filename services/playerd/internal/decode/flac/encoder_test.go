package flac

import (
	"crypto/md5"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// A small FLAC writer for what the reference encoder does not write:
// variable block sizes, escaped partitions on demand, every stereo mode in
// turn, 12- and 20-bit samples. flac -d reads what it writes (the tests
// check), so the streams are FLAC.

type bitWriter struct {
	b   []byte
	cur byte
	n   uint
}

func (w *bitWriter) put(v uint64, k uint) {
	for i := int(k) - 1; i >= 0; i-- {
		w.cur = w.cur<<1 | byte(v>>uint(i)&1)
		w.n++
		if w.n == 8 {
			w.b = append(w.b, w.cur)
			w.cur, w.n = 0, 0
		}
	}
}

func (w *bitWriter) signed(v int64, k uint) { w.put(uint64(v)&(1<<k-1), k) }

func (w *bitWriter) unary(q uint64) {
	for range q {
		w.put(0, 1)
	}
	w.put(1, 1)
}

func (w *bitWriter) align() {
	if w.n > 0 {
		w.put(0, 8-w.n)
	}
}

type craft struct {
	rate, channels, bps int
	sizes               []int // block sizes, in order
	variable            bool
	seed                uint64
	amp                 float64 // of full scale
}

// samples per channel.
func (c craft) signal() [][]int64 {
	total := 0
	for _, n := range c.sizes {
		total += n
	}
	rng := rand.New(rand.NewPCG(c.seed, 7))
	full := float64(int64(1) << (c.bps - 1))
	out := make([][]int64, c.channels)
	for ch := range out {
		out[ch] = make([]int64, total)
		var v float64
		for i := range total {
			v = 0.97*v + (rng.Float64()*2-1)*c.amp*full*0.1
			x := int64(v)
			if ch > 0 && i%3000 < 1000 {
				x = out[0][i] // identical channels: a side of zeros
			}
			x = min(max(x, -int64(full)), int64(full)-1)
			if i%5000 > 4000 {
				x &^= 3 // wasted bits
			}
			if i%7000 > 6500 {
				x = 5 // constant
			}
			out[ch][i] = x
		}
	}
	return out
}

func (c craft) encode() ([]byte, [][]int64) {
	sig := c.signal()
	total := len(sig[0])
	minB, maxB := 65535, 0
	for _, n := range c.sizes {
		minB, maxB = min(minB, n), max(maxB, n)
	}
	var out []byte
	out = append(out, "fLaC"...)
	out = append(out, 0x80, 0, 0, 34)
	var si [34]byte
	binary.BigEndian.PutUint16(si[0:], uint16(minB))
	binary.BigEndian.PutUint16(si[2:], uint16(maxB))
	si[10] = byte(c.rate >> 12)
	si[11] = byte(c.rate >> 4)
	si[12] = byte(c.rate<<4) | byte(c.channels-1)<<1 | byte((c.bps-1)>>4)
	si[13] = byte((c.bps-1)&15)<<4 | byte(uint64(total)>>32)
	binary.BigEndian.PutUint32(si[14:], uint32(total))
	h := md5.New()
	w := (c.bps + 7) / 8
	var b4 [4]byte
	for i := range total {
		for ch := range sig {
			binary.LittleEndian.PutUint32(b4[:], uint32(sig[ch][i]))
			h.Write(b4[:w])
		}
	}
	copy(si[18:], h.Sum(nil))
	out = append(out, si[:]...)
	start := 0
	for f, n := range c.sizes {
		out = append(out, c.frame(f, start, n, sig)...)
		start += n
	}
	return out, sig
}

func codedNumber(v uint64) []byte {
	if v < 0x80 {
		return []byte{byte(v)}
	}
	n := 1
	for v>>(5*n+6) != 0 {
		n++
	}
	// n continuation bytes, 6 bits each; the first byte carries the rest.
	b := make([]byte, n+1)
	for i := n; i > 0; i-- {
		b[i] = 0x80 | byte(v&0x3F)
		v >>= 6
	}
	b[0] = byte(0xFF<<(7-n)) | byte(v)
	return b
}

func (c craft) frame(f, start, n int, sig [][]int64) []byte {
	var hb []byte
	hb = append(hb, 0xFF, 0xF8)
	if c.variable {
		hb[1] |= 1
	}
	bsCode := byte(7)
	if n <= 256 {
		bsCode = 6
	}
	rateCode := byte(13)
	if c.rate >= 65536 {
		rateCode = 14
	}
	bpsCode := map[int]byte{8: 1, 12: 2, 16: 4, 20: 5, 24: 6, 32: 7}[c.bps]
	assign := c.channels - 1
	if c.channels == 2 {
		assign = []int{1, 8, 9, 10}[f%4]
	}
	hb = append(hb, bsCode<<4|rateCode, byte(assign)<<4|bpsCode<<1)
	num := uint64(start)
	if !c.variable {
		num = uint64(f)
	}
	hb = append(hb, codedNumber(num)...)
	if bsCode == 6 {
		hb = append(hb, byte(n-1))
	} else {
		hb = append(hb, byte((n-1)>>8), byte(n-1))
	}
	if rateCode == 13 {
		hb = append(hb, byte(c.rate>>8), byte(c.rate))
	} else {
		hb = append(hb, byte(c.rate/10>>8), byte(c.rate/10))
	}
	hb = append(hb, crc8(hb))
	w := &bitWriter{b: hb}
	chans := make([][]int64, c.channels)
	for ch := range chans {
		chans[ch] = sig[ch][start : start+n]
	}
	if c.channels == 2 && assign >= 8 {
		l, r := chans[0], chans[1]
		side := make([]int64, n)
		mid := make([]int64, n)
		for i := range side {
			side[i] = l[i] - r[i]
			mid[i] = (l[i] + r[i]) >> 1
		}
		switch assign {
		case 8:
			chans[1] = side
		case 9:
			chans[0] = side
		case 10:
			chans[0], chans[1] = mid, side
		}
	}
	for ch, s := range chans {
		bps := c.bps
		if (assign == 8 || assign == 10) && ch == 1 || assign == 9 && ch == 0 {
			bps++
		}
		writeSubframe(w, s, bps, f+ch)
	}
	w.align()
	crc := crc16(w.b)
	return append(w.b, byte(crc>>8), byte(crc))
}

func writeSubframe(w *bitWriter, s []int64, bps, seed int) {
	same := true
	tz := 64
	for _, v := range s {
		same = same && v == s[0]
		if v != 0 {
			tz = min(tz, bits.TrailingZeros64(uint64(v)))
		}
	}
	if same {
		w.put(0, 8)
		w.signed(s[0], uint(bps))
		return
	}
	wasted := 0
	if tz > 0 && tz < bps && seed%2 == 0 {
		wasted = tz
	}
	sh := make([]int64, len(s))
	for i, v := range s {
		sh[i] = v >> wasted
	}
	bps -= wasted
	order := seed % 5
	if order > len(s) {
		order = 0
	}
	res := make([]int64, len(s))
	fit := true
	for i := order; i < len(s); i++ {
		x := sh[i]
		switch order {
		case 1:
			x -= sh[i-1]
		case 2:
			x -= 2*sh[i-1] - sh[i-2]
		case 3:
			x -= 3*sh[i-1] - 3*sh[i-2] + sh[i-3]
		case 4:
			x -= 4*sh[i-1] - 6*sh[i-2] + 4*sh[i-3] - sh[i-4]
		}
		res[i] = x
		fit = fit && x >= -1<<30 && x < 1<<30
	}
	typ := uint64(1)
	if fit && seed%7 != 3 {
		typ = uint64(8 + order)
	}
	w.put(typ, 7)
	if wasted > 0 {
		w.put(1, 1)
		w.unary(uint64(wasted - 1))
	} else {
		w.put(0, 1)
	}
	if typ == 1 {
		for _, v := range sh {
			w.signed(v, uint(bps))
		}
		return
	}
	for i := range order {
		w.signed(sh[i], uint(bps))
	}
	method := uint64(seed % 2)
	pbits, escape := uint(4), uint64(15)
	if method == 1 {
		pbits, escape = 5, 31
	}
	w.put(method, 2)
	porder := 0
	for p := 1; p <= 4; p++ {
		if len(s)%(1<<p) == 0 && len(s)>>p >= order {
			porder = p
		}
	}
	w.put(uint64(porder), 4)
	part := len(s) >> porder
	for p := range 1 << porder {
		lo, hi := p*part, (p+1)*part
		if p == 0 {
			lo = order
		}
		var sum uint64
		width := uint(0)
		for _, x := range res[lo:hi] {
			u := uint64(x<<1) ^ uint64(x>>63)
			sum += u
			if x != 0 {
				width = max(width, uint(65-bits.LeadingZeros64(uint64(x^x>>63))))
			}
		}
		k := uint(0)
		if hi > lo {
			for k < uint(escape)-1 && uint64(hi-lo)<<(k+1) <= sum {
				k++
			}
		}
		// Escaped every third partition, and where the largest parameter
		// still leaves long unary codes (Rice's 14 on 32-bit residuals).
		if (p+seed)%3 == 0 || width == 0 || sum>>k > uint64(hi-lo)*16 {
			w.put(escape, pbits)
			w.put(uint64(width), 5)
			for _, x := range res[lo:hi] {
				w.signed(x, width)
			}
			continue
		}
		w.put(uint64(k), pbits)
		for _, x := range res[lo:hi] {
			u := uint64(x<<1) ^ uint64(x>>63)
			w.unary(u >> k)
			w.put(u&(1<<k-1), k)
		}
	}
}
