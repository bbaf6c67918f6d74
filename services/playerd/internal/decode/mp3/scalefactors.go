package mp3

// scalefactors of one channel. MPEG-1 keeps the long ones from granule 0
// where scfsi says granule 1 shares them.
type scalefactors struct {
	long  [22]int    // sfb 21 is never sent: always 0
	short [13][3]int // [sfb][window]; sfb 12 is never sent
}

// longBands is the number of long bands in the long part of a mixed
// block: those below the fourth short band, where the short part starts
// (line 36; at 8 kHz line 72), as 13818-3's partition table counts them
// (six for MPEG-2). mpg123 and the ISO reference software read eight long
// bands in MPEG-2 too, which its table contradicts; no encoder in use
// writes mixed blocks at these rates, so the tests leave them out.
func longBands(h header) int {
	if h.lsf {
		return 6
	}
	return 8
}

// readScalefactors1 reads MPEG-1 scalefactors (ISO/IEC 11172-3 2.4.2.7).
func readScalefactors1(br *bitReader, gc *granule, scfsi *[4]bool, gr int, sf *scalefactors) {
	n1, n2 := uint(slen1[gc.sfCompress]), uint(slen2[gc.sfCompress])
	if gc.blockType == blockShort {
		first := 0
		if gc.mixed {
			for b := range 8 {
				sf.long[b] = int(br.read(n1))
			}
			first = 3
		}
		for b := first; b < 12; b++ {
			n := n1
			if b >= 6 {
				n = n2
			}
			for w := range 3 {
				sf.short[b][w] = int(br.read(n))
			}
		}
		sf.short[12] = [3]int{}
		return
	}
	groups := [5]int{0, 6, 11, 16, 21}
	for g := range 4 {
		if gr == 1 && scfsi[g] {
			continue
		}
		n := n1
		if g >= 2 {
			n = n2
		}
		for b := groups[g]; b < groups[g+1]; b++ {
			sf.long[b] = int(br.read(n))
		}
	}
	sf.long[21] = 0
}

// lsfPartition reads an MPEG-2 scalefac_compress: the bit lengths of the
// four groups of scalefactors, the partition of the bands into them
// (nrOfSfb) and preflag. The right channel of an intensity stereo frame
// codes its intensity positions with partitions of their own.
func lsfPartition(c int, intensityRight bool) (slen [4]int, part int, preflag bool) {
	if intensityRight {
		c >>= 1
		switch {
		case c < 180:
			return [4]int{c / 36, c % 36 / 6, c % 36 % 6, 0}, 3, false
		case c < 244:
			c -= 180
			return [4]int{c % 64 >> 4, c % 16 >> 2, c % 4, 0}, 4, false
		}
		c -= 244
		return [4]int{c / 3, c % 3, 0, 0}, 5, false
	}
	switch {
	case c < 400:
		return [4]int{c >> 4 / 5, c >> 4 % 5, c % 16 >> 2, c % 4}, 0, false
	case c < 500:
		c -= 400
		return [4]int{c >> 2 / 5, c >> 2 % 5, c % 4, 0}, 1, false
	}
	c -= 500
	return [4]int{c / 3, c % 3, 0, 0}, 2, true
}

// readScalefactors2 reads MPEG-2 and MPEG-2.5 scalefactors (ISO/IEC
// 13818-3 2.4.3.2) in the groups lsfPartition gives.
func readScalefactors2(br *bitReader, gc *granule, intensityRight bool, sf *scalefactors) {
	slen, part, preflag := lsfPartition(gc.sfCompress, intensityRight)
	gc.preflag = preflag
	kind := kindLong
	if gc.blockType == blockShort {
		kind = kindShort
		if gc.mixed {
			kind = kindMixed
		}
	}
	counts := nrOfSfb[part][kind]
	sf.long, sf.short = [22]int{}, [13][3]int{}
	// The values come in band order: long bands, or short bands window by
	// window; a mixed block's first six are long, its short bands start
	// at the fourth. Bands after the last group are never sent: zero.
	i := 0
	for g := range 4 {
		n := uint(slen[g])
		for range counts[g] {
			v := int(br.read(n))
			switch {
			case kind == kindLong || kind == kindMixed && i < 6:
				sf.long[i] = v
			default:
				k := i
				if kind == kindMixed {
					k += 3 // 6 long values stand for short bands 0..2
				}
				sf.short[k/3][k%3] = v
			}
			i++
		}
	}
}
