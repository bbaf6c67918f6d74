package mp3

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// lame never writes intensity stereo or mixed blocks, and uses only some
// Huffman tables. These tests write frames themselves, with random but
// valid content covering every feature, and compare the decoding with
// mpg123's as the corpus does.

type bitWriter struct {
	buf []byte
	n   int // bits
}

func (w *bitWriter) put(v uint32, bits int) {
	for i := bits - 1; i >= 0; i-- {
		if w.n%8 == 0 {
			w.buf = append(w.buf, 0)
		}
		if v>>uint(i)&1 != 0 {
			w.buf[w.n/8] |= 0x80 >> uint(w.n%8)
		}
		w.n++
	}
}

func (w *bitWriter) append(o *bitWriter) {
	for i := range o.n {
		w.put(uint32(o.buf[i/8]>>(7-uint(i%8))&1), 1)
	}
}

// genStream describes the frames to write.
type genStream struct {
	version int // 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5
	sri     int // sampling frequency index 0..2
	bri     int // bitrate index: the frames must be large
	mode    int
	modeExt int // for joint stereo: bit 1 mid/side, bit 0 intensity
	crc     bool
	mixed   bool // allow mixed blocks
	sparse  bool // few values: small frames
	// illegalIS gives every intensity position of an MPEG-1 right channel
	// an illegal value, 7..15, half of them 9 (the frame is otherwise
	// valid).
	illegalIS bool
	// level makes every granule loud (loudLevel: global_gain 255, no
	// scalefactor or subblock attenuation, the big values at the largest
	// escape value) or hushed (hushLevel: every value zero), after the
	// same random draws as at the usual level, so that streams written
	// with the same seed differ only there.
	level int
}

const (
	loudLevel = 1 + iota
	hushLevel
)

// loudValue is the largest value the big-values region can code: 15 and
// 13 linbits.
const loudValue = 15 + 1<<13 - 1

type genGranule struct {
	bigValues                   int
	globalGain                  int
	sfc                         int
	blockType                   int
	mixed                       bool
	tables                      [3]int
	subGain                     [3]int
	r0, r1                      int
	preflag, sfScale, count1Tab int
	long                        [22]int
	short                       [13][3]int
	vals                        [576]int // bitstream order
	end                         int      // values coded: big values and quadruples
}

// bandOrder gives, for each value in bitstream order, its long band (win
// -1) or short band and window.
func bandOrder(rateIdx int, g *genGranule, lsf bool) (sfb, win [576]int) {
	kind := kindLong
	if g.blockType == blockShort {
		kind = kindShort
		if g.mixed {
			kind = kindMixed
		}
	}
	for _, b := range bandLayouts[rateIdx][kind] {
		for i := range b.width {
			sfb[b.start+i], win[b.start+i] = b.sfb, b.win
		}
	}
	return sfb, win
}

type generator struct {
	r   *rand.Rand
	s   genStream
	h   header
	amp int // global gain offset, lowered until the output is moderate
}

func (g *generator) tableFor(maxAbs int) int {
	var ok []int
	for t := 1; t < 32; t++ {
		if t == 4 || t == 14 {
			continue
		}
		if t < 16 {
			if huffSpecs[t].size-1 >= maxAbs {
				ok = append(ok, t)
			}
		} else if 15+(1<<linbits[t])-1 >= maxAbs {
			ok = append(ok, t)
		}
	}
	return ok[g.r.IntN(len(ok))]
}

// granule makes one granule of channel ch; the right channel of an
// intensity stereo frame (intensity) is zero from a band on, in each
// window of short blocks.
func (g *generator) granule(ch int, intensity bool) genGranule {
	r := g.r
	var gr genGranule
	switch r.IntN(6) {
	case 0:
		gr.blockType = blockStart
	case 1:
		gr.blockType = blockStop
	case 2, 3:
		gr.blockType = blockShort
		gr.mixed = g.s.mixed && r.IntN(2) == 0
	}
	gr.globalGain = 150 + r.IntN(20) - g.amp
	gr.sfScale = r.IntN(2)
	gr.count1Tab = r.IntN(2)
	if gr.blockType == blockShort {
		for w := range 3 {
			gr.subGain[w] = r.IntN(4)
		}
	}
	lsf := g.h.lsf
	if !lsf {
		gr.sfc = r.IntN(16)
		gr.preflag = r.IntN(2)
		if intensity && g.s.illegalIS {
			gr.sfc = 15 // slen 4 and 3: every band can hold 7 or more
		}
	}
	// The values: large ones low, then smaller, then quadruples.
	big := 2 * (10 + r.IntN(120))
	if gr.blockType != blockShort && r.IntN(3) == 0 {
		big = 2 * (100 + r.IntN(180))
	}
	quads := r.IntN((576 - big) / 4 / 3)
	if g.s.sparse {
		big, quads = 2*(4+r.IntN(12)), r.IntN(8)
	}
	gr.end = big + 4*quads
	for i := range big {
		m := r.IntN(4)
		switch {
		case i < 24 && r.IntN(6) == 0:
			m = r.IntN(2000)
		case i < 80 && r.IntN(4) == 0:
			m = r.IntN(40)
		case r.IntN(3) == 0:
			m = 0
		}
		if r.IntN(2) == 0 {
			m = -m
		}
		gr.vals[i] = m
	}
	for i := big; i < gr.end; i++ {
		if r.IntN(3) == 0 {
			gr.vals[i] = 1 - 2*r.IntN(2)
		}
	}
	switch g.s.level {
	case loudLevel:
		gr.globalGain, gr.sfScale, gr.subGain = 255, 0, [3]int{}
		for i := range big {
			gr.vals[i] = loudValue * (1 - 2*(i&1))
		}
	case hushLevel:
		gr.vals = [576]int{}
	}
	if intensity {
		// Zero from a band on, in every window for short blocks.
		sfb, win := bandOrder(g.h.rateIdx, &gr, lsf)
		longFrom := 4 + r.IntN(12)
		shortFrom := [3]int{3 + r.IntN(6), 3 + r.IntN(6), 3 + r.IntN(6)}
		if gr.mixed && r.IntN(2) == 0 {
			shortFrom = [3]int{3, 3, 3} // the long part is intensity coded too
			longFrom = 2 + r.IntN(4)
		}
		for i := range 576 {
			if win[i] < 0 && sfb[i] >= longFrom || win[i] >= 0 && sfb[i] >= shortFrom[win[i]] {
				gr.vals[i] = 0
			}
		}
	}
	// big_values covers the last non-zero above 1.
	last := 0
	for i := range gr.end {
		if gr.vals[i] > 1 || gr.vals[i] < -1 {
			last = i + 1
		}
	}
	big = min(last+last%2, gr.end)
	gr.bigValues = big / 2
	gr.end = big + (gr.end-big)/4*4
	for i := gr.end; i < 576; i++ {
		gr.vals[i] = 0
	}
	// Regions and their tables.
	var bounds [3]int
	if gr.blockType == blockNormal {
		gr.r0, gr.r1 = r.IntN(16), r.IntN(8)
		bounds[0] = sfbLong[g.h.rateIdx][min(gr.r0+1, 22)]
		bounds[1] = sfbLong[g.h.rateIdx][min(gr.r0+gr.r1+2, 22)]
	} else {
		gc := granule{blockType: gr.blockType, mixed: gr.mixed}
		bounds[0], bounds[1] = switchedRegions(g.h, &gc), 576
	}
	bounds[2] = 576
	from := 0
	for reg := range 3 {
		to := min(bounds[reg], big)
		m := 0
		for i := from; i < to; i++ {
			m = max(m, abs(gr.vals[i]))
		}
		gr.tables[reg] = g.tableFor(m)
		from = max(from, to)
	}
	g.scalefactors(&gr, ch, intensity)
	if g.s.level == loudLevel {
		gr.preflag, gr.long, gr.short = 0, [22]int{}, [13][3]int{}
	}
	return gr
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// scalefactors picks scalefac_compress and values that fit its bit lengths.
func (g *generator) scalefactors(gr *genGranule, ch int, intensity bool) {
	r := g.r
	pick := func(bits int) int {
		if bits == 0 {
			return 0
		}
		v := r.IntN(1 << bits)
		if intensity && ch == 1 {
			// A legal intensity position mostly; 7 means none. MPEG-2's
			// five-bit positions above 15 are left out: mpg123's tables
			// end there. MPEG-1's 8..15 are illegal, decoded as 7 is
			// (stereo in layer3.go), where mpg123 applies tan(p·π/12).
			v = min(v, 15)
			if !g.h.lsf {
				v = min(v, 7)
			}
			if r.IntN(3) != 0 {
				v = min(v, 6)
			}
			if g.s.illegalIS {
				// Half of the four-bit ones 9, whose tan(p·π/12) is -1.
				v = 7 + r.IntN(1<<bits-7)
				if bits >= 4 && r.IntN(2) == 0 {
					v = 9
				}
			}
		}
		return v
	}
	if !g.h.lsf {
		n1, n2 := slen1[gr.sfc], slen2[gr.sfc]
		for b := range 21 {
			n := n1
			if b >= 11 {
				n = n2
			}
			gr.long[b] = pick(n)
		}
		for b := range 12 {
			n := n1
			if b >= 6 {
				n = n2
			}
			for w := range 3 {
				gr.short[b][w] = pick(n)
			}
		}
		return
	}
	if intensity && ch == 1 {
		gr.sfc = r.IntN(255)<<1 | r.IntN(2)
	} else {
		gr.sfc = r.IntN(512)
	}
	slen, counts := lsfGroups(gr, intensity && ch == 1)
	i := 0
	for grp := range 4 {
		for range counts[grp] {
			v := pick(slen[grp])
			switch {
			case gr.blockType != blockShort || gr.mixed && i < 6:
				gr.long[i] = v
			default:
				k := i
				if gr.mixed {
					k += 3
				}
				gr.short[k/3][k%3] = v
			}
			i++
		}
	}
}

// lsfGroups is the partition readScalefactors2 reads from a granule's
// scalefac_compress: bit lengths and counts of the four groups.
func lsfGroups(gr *genGranule, intensityRight bool) ([4]int, [4]int) {
	slen, part, preflag := lsfPartition(gr.sfc, intensityRight)
	if preflag {
		gr.preflag = 1
	}
	return slen, nrOfSfb[part][kindOf(gr)]
}

func kindOf(gr *genGranule) int {
	if gr.blockType != blockShort {
		return kindLong
	}
	if gr.mixed {
		return kindMixed
	}
	return kindShort
}

// mainData writes a granule's scalefactors and Huffman codes.
func (g *generator) mainData(gr *genGranule, ch, grIdx int, scfsi [4]bool, intensity bool) *bitWriter {
	w := &bitWriter{}
	if !g.h.lsf {
		n1, n2 := slen1[gr.sfc], slen2[gr.sfc]
		if gr.blockType == blockShort {
			if gr.mixed {
				for b := range 8 {
					w.put(uint32(gr.long[b]), n1)
				}
			}
			first := 0
			if gr.mixed {
				first = 3
			}
			for b := first; b < 12; b++ {
				n := n1
				if b >= 6 {
					n = n2
				}
				for win := range 3 {
					w.put(uint32(gr.short[b][win]), n)
				}
			}
		} else {
			groups := [5]int{0, 6, 11, 16, 21}
			for grp := range 4 {
				if grIdx == 1 && scfsi[grp] {
					continue
				}
				n := n1
				if grp >= 2 {
					n = n2
				}
				for b := groups[grp]; b < groups[grp+1]; b++ {
					w.put(uint32(gr.long[b]), n)
				}
			}
		}
	} else {
		slen, counts := lsfGroups(gr, intensity && ch == 1)
		i := 0
		for grp := range 4 {
			for range counts[grp] {
				var v int
				switch {
				case gr.blockType != blockShort || gr.mixed && i < 6:
					v = gr.long[i]
				default:
					k := i
					if gr.mixed {
						k += 3
					}
					v = gr.short[k/3][k%3]
				}
				w.put(uint32(v), slen[grp])
				i++
			}
		}
	}
	// Huffman: pairs by region, then quadruples.
	var bounds [2]int
	if gr.blockType == blockNormal {
		bounds[0] = sfbLong[g.h.rateIdx][min(gr.r0+1, 22)]
		bounds[1] = sfbLong[g.h.rateIdx][min(gr.r0+gr.r1+2, 22)]
	} else {
		gc := granule{blockType: gr.blockType, mixed: gr.mixed}
		bounds[0], bounds[1] = switchedRegions(g.h, &gc), 576
	}
	for i := 0; i < 2*gr.bigValues; i += 2 {
		t := gr.tables[2]
		switch {
		case i < bounds[0]:
			t = gr.tables[0]
		case i < bounds[1]:
			t = gr.tables[1]
		}
		spec := huffSpecs[t]
		if t >= 24 {
			spec = huffSpecs[24]
		} else if t >= 16 {
			spec = huffSpecs[16]
		}
		x, y := abs(gr.vals[i]), abs(gr.vals[i+1])
		cx, cy := min(x, 15), min(y, 15)
		k := cx*spec.size + cy
		w.put(uint32(spec.codes[k]), int(spec.lens[k]))
		for _, v := range []int{gr.vals[i], gr.vals[i+1]} {
			a := abs(v)
			if linbits[t] != 0 && a >= 15 {
				w.put(uint32(a-15), int(linbits[t]))
			}
			if a != 0 {
				w.put(uint32(boolBit(v < 0)), 1)
			}
		}
	}
	for i := 2 * gr.bigValues; i < gr.end; i += 4 {
		q := 0
		for j := range 4 {
			if gr.vals[i+j] != 0 {
				q |= 8 >> j
			}
		}
		if gr.count1Tab == 0 {
			w.put(uint32(quadACodes[q]), int(quadALens[q]))
		} else {
			w.put(uint32(15-q), 4)
		}
		for j := range 4 {
			if gr.vals[i+j] != 0 {
				w.put(uint32(boolBit(gr.vals[i+j] < 0)), 1)
			}
		}
	}
	return w
}

func boolBit(b bool) int {
	if b {
		return 1
	}
	return 0
}

// frame writes one frame; ok is false when its main data does not fit.
func (g *generator) frame() ([]byte, bool) {
	s := g.s
	hv := uint32(0xffe00000) | uint32(s.version)<<19 | 1<<17 | uint32(s.bri)<<12 | uint32(s.sri)<<10 | uint32(s.mode)<<6 | uint32(s.modeExt)<<4
	if !s.crc {
		hv |= 1 << 16
	}
	h, ok := parseHeader(hv)
	if !ok {
		panic(fmt.Sprintf("bad header %08x", hv))
	}
	g.h = h
	nch := h.channels()
	intensity := s.mode == modeJoint && s.modeExt&1 != 0
	var grs [2][2]genGranule
	var scfsi [2][4]bool
	for gr := range h.granules() {
		for ch := range nch {
			grs[gr][ch] = g.granule(ch, intensity && ch == 1)
		}
	}
	if !h.lsf {
		for ch := range nch {
			for grp := range 4 {
				scfsi[ch][grp] = g.r.IntN(3) == 0
			}
			// Shared scalefactors are granule 0's, with its slen: only
			// where both granules are long and use the same lengths.
			a, b := &grs[0][ch], &grs[1][ch]
			if a.blockType == blockShort || b.blockType == blockShort {
				scfsi[ch] = [4]bool{}
			}
			b.sfc = a.sfc
			groups := [5]int{0, 6, 11, 16, 21}
			for grp := range 4 {
				if scfsi[ch][grp] {
					copy(b.long[groups[grp]:groups[grp+1]], a.long[groups[grp]:groups[grp+1]])
				}
			}
		}
	}
	side := &bitWriter{}
	var main bitWriter
	parts := [2][2]*bitWriter{}
	for gr := range h.granules() {
		for ch := range nch {
			parts[gr][ch] = g.mainData(&grs[gr][ch], ch, gr, scfsi[ch], intensity)
			main.append(parts[gr][ch])
		}
	}
	if h.lsf {
		side.put(0, 8)
		side.put(0, map[bool]int{true: 1, false: 2}[nch == 1])
	} else {
		side.put(0, 9)
		side.put(0, map[bool]int{true: 5, false: 3}[nch == 1])
		for ch := range nch {
			for grp := range 4 {
				side.put(uint32(boolBit(scfsi[ch][grp])), 1)
			}
		}
	}
	for gr := range h.granules() {
		for ch := range nch {
			x := &grs[gr][ch]
			side.put(uint32(parts[gr][ch].n), 12)
			side.put(uint32(x.bigValues), 9)
			side.put(uint32(x.globalGain), 8)
			if h.lsf {
				side.put(uint32(x.sfc), 9)
			} else {
				side.put(uint32(x.sfc), 4)
			}
			if x.blockType != blockNormal {
				side.put(1, 1)
				side.put(uint32(x.blockType), 2)
				side.put(uint32(boolBit(x.mixed)), 1)
				side.put(uint32(x.tables[0]), 5)
				side.put(uint32(x.tables[1]), 5)
				for w := range 3 {
					side.put(uint32(x.subGain[w]), 3)
				}
			} else {
				side.put(0, 1)
				for reg := range 3 {
					side.put(uint32(x.tables[reg]), 5)
				}
				side.put(uint32(x.r0), 4)
				side.put(uint32(x.r1), 3)
			}
			if !h.lsf {
				side.put(uint32(x.preflag), 1)
			}
			side.put(uint32(x.sfScale), 1)
			side.put(uint32(x.count1Tab), 1)
		}
	}
	if len(side.buf) != h.sideInfo {
		panic(fmt.Sprintf("side info of %d bytes, want %d", len(side.buf), h.sideInfo))
	}
	if len(main.buf) > h.mainData() {
		return nil, false
	}
	out := make([]byte, h.size)
	binary.BigEndian.PutUint32(out, hv)
	at := 4
	if s.crc {
		crc := crc16(0xffff, out[2:4])
		crc = crc16(crc, side.buf)
		binary.BigEndian.PutUint16(out[4:], crc)
		at = 6
	}
	copy(out[at:], side.buf)
	copy(out[at+h.sideInfo:], main.buf)
	return out, true
}

// crc16 is the frame CRC: polynomial 0x8005, most significant bit first.
func crc16(crc uint16, data []byte) uint16 {
	for _, b := range data {
		for i := 7; i >= 0; i-- {
			bit := (b>>uint(i))&1 != 0
			top := crc&0x8000 != 0
			crc <<= 1
			if bit != top {
				crc ^= 0x8005
			}
		}
	}
	return crc
}

func (g *generator) stream(frames int) []byte {
	var out []byte
	for range frames {
		for {
			f, ok := g.frame()
			if ok {
				out = append(out, f...)
				break
			}
		}
	}
	return out
}

func TestSyntheticAgainstMpg123(t *testing.T) {
	_, mpg123 := needTools(t)
	cases := []struct {
		name string
		s    genStream
	}{
		{"mpeg1-intensity", genStream{version: 3, sri: 2, bri: 14, mode: modeJoint, modeExt: 1, mixed: true}},
		{"mpeg1-ms-intensity", genStream{version: 3, sri: 2, bri: 14, mode: modeJoint, modeExt: 3, mixed: true}},
		{"mpeg1-ms-crc", genStream{version: 3, sri: 0, bri: 14, mode: modeJoint, modeExt: 2, crc: true, mixed: true}},
		{"mpeg1-stereo-mixed", genStream{version: 3, sri: 1, bri: 14, mode: modeStereo, mixed: true}},
		{"mpeg1-mono", genStream{version: 3, sri: 2, bri: 14, mode: modeMono, mixed: true}},
		{"mpeg2-intensity", genStream{version: 2, sri: 2, bri: 14, mode: modeJoint, modeExt: 1}},
		{"mpeg2-ms-intensity", genStream{version: 2, sri: 0, bri: 14, mode: modeJoint, modeExt: 3}},
		{"mpeg2-dual", genStream{version: 2, sri: 1, bri: 14, mode: modeDual}},
		{"mpeg25-intensity", genStream{version: 0, sri: 2, bri: 14, mode: modeJoint, modeExt: 1}},
		{"mpeg25-mono-crc", genStream{version: 0, sri: 0, bri: 14, mode: modeMono, crc: true}},
	}
	dir := t.TempDir()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			var got []float32
			for amp := 0; ; amp += 8 {
				g := &generator{r: rand.New(rand.NewPCG(uint64(i), 99)), s: tc.s, amp: amp}
				data = g.stream(60)
				d, err := NewStream(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				got = decodeAll(t, d)
				peak := 0.0
				for _, v := range got {
					peak = max(peak, math.Abs(float64(v)))
				}
				if peak < 0.8 || amp > 200 {
					break
				}
			}
			path := filepath.Join(dir, tc.name+".mp3")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			raw, err := exec.Command(mpg123, "-q", "-e", "f32", "-s", path).Output()
			if err != nil {
				t.Fatalf("mpg123: %v", err)
			}
			ref := make([]float32, len(raw)/4)
			for i := range ref {
				ref[i] = math.Float32frombits(binary.NativeEndian.Uint32(raw[4*i:]))
			}
			if len(got) != len(ref) {
				t.Errorf("%d values, mpg123 %d", len(got), len(ref))
			}
			nch := 2
			if tc.s.mode == modeMono {
				nch = 1
			}
			rms, most := difference(got, ref, nch)
			for c := range nch {
				t.Logf("%-20s ch%d  RMS %.3g  max %.3g", tc.name, c, rms[c], most[c])
				if rms[c] >= fullAccuracyRMS || most[c] > fullAccuracyMax {
					t.Errorf("channel %d: RMS %.3g, max %.3g: not full accuracy", c, rms[c], most[c])
				}
			}
		})
	}
}
