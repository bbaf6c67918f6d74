package mp3

import "math"

// A band is a run of values that share a gain: a scalefactor band, or one
// window of a short one. Short blocks arrive band by band, window by
// window, and are reordered on the way to frequency order within each
// window interleaved by three (line f of window w at 3f+w), the order the
// short IMDCT reads.
type band struct {
	start, width int // in bitstream order
	pos, step    int // where the first value goes, and the step to the next
	sfb, win     int // win is -1 for a long band
}

// Block kinds for the band layouts.
const (
	kindLong = iota
	kindShort
	kindMixed
)

var bandLayouts [9][3][]band

// gainPow holds 2^(q/4) for every exponent q a granule can give, from
// global_gain, subblock gain, scalefactors and the mid/side scaling.
const gainBias = 420

var gainPow [gainBias + 64]float32

// Intensity stereo weights by position, for the left and right channel,
// without and with the mid/side scaling to undo (index 1).
var (
	isRatio [2][32][2]float32    // MPEG-1: from tan(p·π/12), p < 7 (2.4.3.4.9.3)
	isLSF   [2][2][32][2]float32 // MPEG-2: by intensity_scale, then as above
)

// Alias reduction butterflies (2.4.3.4.10.1).
var aliasCS, aliasCA [8]float32

func init() {
	for r := range 9 {
		var long, short, mixed []band
		for b := range 22 {
			s, e := sfbLong[r][b], sfbLong[r][b+1]
			long = append(long, band{start: s, width: e - s, pos: s, step: 1, sfb: b, win: -1})
		}
		shortFrom := func(first int) []band {
			var out []band
			for b := first; b < 13; b++ {
				s, e := sfbShort[r][b], sfbShort[r][b+1]
				for w := range 3 {
					out = append(out, band{start: 3*s + w*(e-s), width: e - s, pos: 3*s + w, step: 3, sfb: b, win: w})
				}
			}
			return out
		}
		short = shortFrom(0)
		lb := 8
		if r >= 3 {
			lb = 6
		}
		mixed = append(append(mixed, long[:lb]...), shortFrom(3)...)
		bandLayouts[r] = [3][]band{long, short, mixed}
	}
	for i := range gainPow {
		gainPow[i] = float32(math.Pow(2, float64(i-gainBias)/4))
	}
	for p := range 32 {
		t := math.Tan(float64(p) * math.Pi / 12)
		for ms := range 2 {
			k := 1.0
			if ms == 1 {
				k = math.Sqrt2
			}
			if p < 7 {
				isRatio[ms][p] = [2]float32{float32(k * t / (1 + t)), float32(k / (1 + t))}
			}
			for sc := range 2 {
				io := math.Pow(2, -float64(sc+1)/4)
				l, r := 1.0, 1.0
				switch {
				case p == 0:
				case p%2 == 1:
					l = math.Pow(io, float64(p+1)/2)
				default:
					r = math.Pow(io, float64(p)/2)
				}
				isLSF[sc][ms][p] = [2]float32{float32(k * l), float32(k * r)}
			}
		}
	}
	for i, c := range aliasCoefficients {
		sq := math.Sqrt(1 + c*c)
		aliasCS[i], aliasCA[i] = float32(1/sq), float32(c/sq)
	}
}

// mainDataSize bounds the main data one frame can use: the largest
// reservoir (511 bytes) and the largest frame's main data (1,441 bytes at
// 320 kbit/s and 32 kHz, less header and side information), with room for
// loads past the end.
const (
	mainDataSize = 2048
	mainDataPad  = 64
)

// layer3 is the decoding state of a stream: the bit reservoir, each
// channel's scalefactors, overlap and synthesis filter bank.
type layer3 struct {
	res    [mainDataSize + mainDataPad]byte
	resLen int

	si   sideInfo
	sf   [2]scalefactors
	vals [576]float32
	xr   [2][576]float32
	nz   [2]int // xr[ch][nz[ch]:] is zero
	// loudest is the largest |xr| of the granules kept and refused counts
	// those decoded as silence for exceeding xrBound, since the decoder
	// was made: for the tests to show a file's headroom below the bound.
	loudest float32
	refused int
	overlap [2][32][18]float32
	ts      [18][32]float32
	synth   [2]synthesis
}

// reset forgets the past: the reservoir, overlap and filter bank history,
// as before the first frame of a stream or after a seek.
func (l *layer3) reset() {
	l.resLen = 0
	l.overlap = [2][32][18]float32{}
	l.synth = [2]synthesis{}
}

// feed adds a frame's main data to the reservoir without decoding it: the
// frames before a seek target that the target's main data may begin in.
func (l *layer3) feed(h header, frame []byte) {
	md := frame[4+h.crcBytes()+h.sideInfo:]
	l.keep(h, l.append(md))
}

func (l *layer3) append(md []byte) int {
	md = md[:min(len(md), mainDataSize-l.resLen)]
	total := l.resLen + copy(l.res[l.resLen:mainDataSize], md)
	clear(l.res[total : total+mainDataPad])
	return total
}

// keep leaves in the reservoir what the next frame's main_data_begin can
// reach: 511 bytes (MPEG-1) or 255.
func (l *layer3) keep(h header, total int) {
	most := 511
	if h.lsf {
		most = 255
	}
	n := min(total, most)
	copy(l.res[:n], l.res[total-n:total])
	l.resLen = n
}

// decodeFrame decodes a frame with header h into out: h.samples() samples
// of each of h.channels() channels. A frame whose main data begins before
// the reservoir's start (the first frames of a stream joined in the
// middle) or whose side information is invalid decodes as silence into the
// filter banks, which keep their history.
func (l *layer3) decodeFrame(h header, frame []byte, out *[2][1152]float32) {
	var side [32 + 8]byte
	at := 4 + h.crcBytes()
	copy(side[:], frame[at:at+h.sideInfo])
	valid := readSideInfo(&bitReader{data: side[:]}, h, &l.si)
	total := l.append(frame[at+h.sideInfo:])
	start := l.resLen - l.si.mainDataBegin
	valid = valid && start >= 0
	br := bitReader{data: l.res[:]}
	limit := total * 8
	pos := start * 8
	nch := h.channels()
	ms := h.mode == modeJoint && h.modeExt&2 != 0
	is := h.mode == modeJoint && h.modeExt&1 != 0
	for gr := range h.granules() {
		for ch := range nch {
			gc := &l.si.gr[gr][ch]
			if !valid || pos >= limit {
				clear(l.xr[ch][:l.nz[ch]])
				l.nz[ch] = 0
				continue
			}
			br.pos = pos
			end := pos + gc.part23
			if h.lsf {
				readScalefactors2(&br, gc, is && ch == 1, &l.sf[ch])
			} else {
				readScalefactors1(&br, gc, &l.si.scfsi[ch], gr, &l.sf[ch])
			}
			n := 0
			if br.pos < limit {
				n = readHuffman(&br, end, limit, gc, &l.vals)
			}
			l.requantize(h, gc, ch, n, ms)
			pos = end
		}
		if nch == 2 && (ms || is) {
			l.stereo(h, gr, ms, is)
		}
		for ch := range nch {
			gc := &l.si.gr[gr][ch]
			if !valid {
				gc = &silentGranule
			}
			sbLimit := l.antialias(h, gc, ch)
			l.hybrid(h, gc, ch, sbLimit)
			dst := (*[576]float32)(out[ch][gr*576 : gr*576+576])
			for t := range 18 {
				l.synth[ch].block(&l.ts[t], (*[32]float32)(dst[t*32:t*32+32]))
			}
		}
	}
	l.keep(h, total)
}

// silentGranule stands for the side information of a frame decoded as
// silence: long blocks, so the overlap of the frame before fades out as in
// the reference decoders.
var silentGranule granule

// xrBound is the largest requantised value (2.4.3.4.7) a granule may
// hold; a granule with a larger one is decoded as silence. Syntax alone
// allows 8206^(4/3)·2^((255-210)/4) = 4e8, which the IMDCT and the filter
// bank carry to 6e9 at the output from a few dozen such values
// (TestLoudGranulesAreSilence) and more from a granule full of them, beyond
// the fuzz targets' bound of 1e9 and, clamped, full-scale noise in the
// child's ear.
//
// No input within full scale comes near it. An encoder's subband samples
// are sums of input samples times the analysis window C = D/32 (Table
// 3-C.1 against 3-B.3) and cosines at most 1 in magnitude: |S| <= Σ|C| =
// 2.66. The MDCT this decoder's IMDCT inverts is 4/n·Σ w·S·cos over the
// n = 36 values of a long block (12 of a short one): |xr| <= 2.66 ·
// 4/n · Σ|w| = 2.66 · 2.55 = 6.8 for the normal and the short window
// alike (4/36 · 22.9, 4/12 · 7.66; start and stop 2.37). 2^12 leaves 600 times
// that (56 dB), 300 times where intensity stereo codes two channels' sum
// in one, for clipping masters and the quantiser's error; lame's
// encodings of full-scale sines, square waves and noise reach 1.4
// (TestLegalLevelsStayBelowTheBound).
//
// From values within the bound the output stays within the fuzz bound:
// stereo processing at most doubles a value and weighs it by √2, alias
// reduction by at most cs+ca = 1.37, the IMDCT with its overlap and the
// polyphase filter bank by the largest sums of their coefficients'
// magnitudes, 17.6 and 61.8: TestWorstCaseGain computes them from the
// decoder's own transforms, a product of 4,223, and 2^12 times that is
// 1.7e7, 58 times below 1e9.
const xrBound = 1 << 12

// requantize scales the Huffman values of one channel (2.4.3.4.7) and puts
// them in reordered frequency order in xr; a granule beyond xrBound is
// cleared.
func (l *layer3) requantize(h header, gc *granule, ch, n int, ms bool) {
	kind := kindLong
	if gc.blockType == blockShort {
		kind = kindShort
		if gc.mixed {
			kind = kindMixed
		}
	}
	sf := &l.sf[ch]
	xr := &l.xr[ch]
	base := gainBias + gc.globalGain - 210
	if ms {
		base -= 2 // the 1/√2 of mid/side stereo
	}
	shift := uint(1 + gc.sfScale)
	nz := 0
	var peak float32
	for _, b := range bandLayouts[h.rateIdx][kind] {
		if b.start >= n {
			if kind == kindLong {
				if b.start < l.nz[ch] {
					clear(xr[b.start:l.nz[ch]])
				}
				break
			}
			if b.pos < l.nz[ch] {
				for i := range b.width {
					xr[b.pos+3*i] = 0
				}
			}
			continue
		}
		q := base
		if b.win < 0 {
			s := sf.long[b.sfb]
			if gc.preflag {
				s += pretab[b.sfb]
			}
			q -= s << shift
		} else {
			q -= 8*gc.subGain[b.win] + sf.short[b.sfb][b.win]<<shift
		}
		g := gainPow[max(q, 0)]
		m := min(b.width, n-b.start)
		src := l.vals[b.start : b.start+m]
		var hi, lo float32
		if b.step == 1 {
			dst := xr[b.pos : b.pos+b.width]
			for i, v := range src {
				dst[i] = v * g
				hi, lo = max(hi, v), min(lo, v)
			}
			clear(dst[m:])
			nz = b.pos + m
			peak = max(peak, max(hi, -lo)*g)
			continue
		}
		for i, v := range src {
			xr[b.pos+3*i] = v * g
			hi, lo = max(hi, v), min(lo, v)
		}
		peak = max(peak, max(hi, -lo)*g)
		for i := m; i < b.width; i++ {
			xr[b.pos+3*i] = 0
		}
		nz = max(nz, b.pos+3*(m-1)+1)
	}
	if peak > xrBound {
		clear(xr[:])
		nz = 0
		l.refused++
	} else {
		l.loudest = max(l.loudest, peak)
	}
	l.nz[ch] = nz
}

// stereo undoes mid/side and intensity stereo (ISO/IEC 11172-3
// 2.4.3.4.9.2 and .3; 13818-3 2.4.3.2 for the lower sampling
// frequencies). The mid/side scaling is already in the gains, so mid/side
// is a sum and a difference; intensity stereo then sets both channels from
// the left one in the bands above the right channel's last non-zero value,
// from the right channel's scalefactors (intensity positions). MPEG-1
// defines positions 0..6; a band with 7 or more (four-bit scalefactors
// reach 15) is illegal and keeps the frame's other stereo processing, as
// 2.4.3.4.9.3 has for is_pos 7: mid/side if that is on, else left/right.
// Position 9 would otherwise give tan(9π/12) = -1 and weights of ±4.5e15.
// For MPEG-2 only 7 means none, as mpg123 (consulted for this behaviour)
// and the ISO reference software have it. The last band, which has no
// scalefactor, takes the position of the one below it (mpg123 and the
// reference software likewise).
func (l *layer3) stereo(h header, gr int, ms, is bool) {
	gc := &l.si.gr[gr][1]
	var bounds isBounds
	if is {
		bounds = l.intensityBounds(h, gc)
	}
	if ms {
		n := max(l.nz[0], l.nz[1])
		a, b := l.xr[0][:n], l.xr[1][:n]
		for i := range a {
			m, s := a[i], b[i]
			a[i], b[i] = m+s, m-s
		}
		l.nz[0], l.nz[1] = n, n
	}
	if !is {
		return
	}
	msi := 0
	if ms {
		msi = 1
	}
	weights := &isRatio[msi]
	if h.lsf {
		weights = &isLSF[l.si.gr[gr][1].sfCompress&1][msi]
	}
	sf := &l.sf[1]
	x0, x1 := &l.xr[0], &l.xr[1]
	apply := func(p, pos, width, step int) {
		if p == 7 || p > 7 && !h.lsf {
			return
		}
		w := weights[p&31]
		for i := range width {
			v := x0[pos+i*step]
			x0[pos+i*step] = v * w[0]
			x1[pos+i*step] = v * w[1]
		}
	}
	r := h.rateIdx
	if gc.blockType != blockShort {
		if bounds.long > 21 {
			return
		}
		for b := bounds.long; b < 21; b++ {
			apply(sf.long[b], sfbLong[r][b], sfbLong[r][b+1]-sfbLong[r][b], 1)
		}
		apply(sf.long[20], sfbLong[r][21], 576-sfbLong[r][21], 1)
		l.nz[0], l.nz[1] = 576, 576
		return
	}
	for w := range 3 {
		for b := bounds.short[w]; b < 12; b++ {
			s, e := sfbShort[r][b], sfbShort[r][b+1]
			apply(sf.short[b][w], 3*s+w, e-s, 3)
		}
		s := sfbShort[r][12]
		apply(sf.short[11][w], 3*s+w, 192-s, 3)
	}
	if gc.mixed && bounds.short == [3]int{3, 3, 3} {
		for b := bounds.long; b < longBands(h); b++ {
			apply(sf.long[b], sfbLong[r][b], sfbLong[r][b+1]-sfbLong[r][b], 1)
		}
	}
	l.nz[0], l.nz[1] = 576, 576
}

// isBounds are the first bands above the right channel's last non-zero
// value: long, and short per window (at least 3 in a mixed block).
type isBounds struct {
	long  int
	short [3]int
}

func (l *layer3) intensityBounds(h header, gc *granule) isBounds {
	x := &l.xr[1]
	r := h.rateIdx
	var out isBounds
	last := -1
	if gc.blockType != blockShort || gc.mixed {
		end := 576
		if gc.blockType == blockShort {
			end = sfbLong[r][longBands(h)]
		}
		for i := min(end, l.nz[1]) - 1; i >= 0; i-- {
			if x[i] != 0 {
				last = i
				break
			}
		}
		for b := range 22 {
			if last >= sfbLong[r][b] {
				out.long = b + 1
			}
		}
		if gc.blockType != blockShort {
			return out
		}
	}
	first := 0
	if gc.mixed {
		first = 3
	}
	for w := range 3 {
		out.short[w] = first
		for b := 12; b >= first; b-- {
			s, e := sfbShort[r][b], sfbShort[r][b+1]
			found := false
			for f := e - 1; f >= s; f-- {
				if 3*f+w < l.nz[1] && x[3*f+w] != 0 {
					found = true
					break
				}
			}
			if found {
				out.short[w] = b + 1
				break
			}
		}
	}
	return out
}

// antialias applies the alias reduction butterflies between the long
// subbands (2.4.3.4.10.1) and returns how many subbands may now be
// non-zero.
func (l *layer3) antialias(h header, gc *granule, ch int) int {
	nz := l.nz[ch]
	bounds := 0
	switch {
	case gc.blockType != blockShort:
		bounds = min(31, (nz+7)/18)
	case gc.mixed:
		bounds = min(1, (nz+7)/18)
	}
	x := &l.xr[ch]
	for b := 1; b <= bounds; b++ {
		lo := (*[8]float32)(x[18*b-8 : 18*b])
		hi := (*[8]float32)(x[18*b : 18*b+8])
		for i := range 8 {
			u, d := lo[7-i], hi[i]
			lo[7-i] = u*aliasCS[i] - d*aliasCA[i]
			hi[i] = d*aliasCS[i] + u*aliasCA[i]
		}
	}
	if bounds > 0 {
		nz = max(nz, 18*bounds+8)
		l.nz[ch] = nz
	}
	return min((nz+17)/18, 32)
}

// hybrid runs the IMDCT of each subband with its window and overlap
// (2.4.3.4.10.2), and the frequency inversion of the odd subbands, into
// l.ts: 18 samples of each of 32 subbands.
func (l *layer3) hybrid(h header, gc *granule, ch, sbLimit int) {
	x := &l.xr[ch]
	ov := &l.overlap[ch]
	longSubbands := sbLimit
	if gc.blockType == blockShort {
		longSubbands = 0
		if gc.mixed {
			longSubbands = sfbLong[h.rateIdx][longBands(h)] / 18
		}
	}
	var out [18]float32
	for sb := range 32 {
		switch {
		case sb >= sbLimit:
			out = ov[sb]
			ov[sb] = [18]float32{}
		case sb < longSubbands:
			win := &imdctWindows[gc.blockType]
			if gc.blockType == blockShort {
				win = &imdctWindows[blockNormal]
			}
			imdct36((*[18]float32)(x[sb*18:sb*18+18]), &ov[sb], win, &out)
		default:
			imdct12((*[18]float32)(x[sb*18:sb*18+18]), &ov[sb], &out)
		}
		if sb&1 == 1 {
			for t := 1; t < 18; t += 2 {
				out[t] = -out[t]
			}
		}
		for t := range 18 {
			l.ts[t][sb] = out[t]
		}
	}
}
