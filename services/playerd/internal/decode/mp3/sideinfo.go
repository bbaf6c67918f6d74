package mp3

// Block types of a granule.
const (
	blockNormal = 0
	blockStart  = 1
	blockShort  = 2
	blockStop   = 3
)

// granule is the side information of one granule of one channel.
type granule struct {
	part23      int // bits of scalefactors and Huffman data
	bigValues   int
	globalGain  int
	sfCompress  int
	blockType   int
	mixed       bool
	tableSelect [3]int
	subGain     [3]int
	region1     int // first value of region 1, in bitstream order
	region2     int
	preflag     bool
	sfScale     int
	count1Table int
}

type sideInfo struct {
	mainDataBegin int
	scfsi         [2][4]bool
	gr            [2][2]granule
}

// readSideInfo parses the side information of a frame whose header is h
// (ISO/IEC 11172-3 2.4.1.7, 13818-3 2.4.1.7). It returns false for values
// the standard forbids.
func readSideInfo(br *bitReader, h header, si *sideInfo) bool {
	nch := h.channels()
	if h.lsf {
		si.mainDataBegin = int(br.read(8))
		if nch == 1 {
			br.read(1)
		} else {
			br.read(2)
		}
	} else {
		si.mainDataBegin = int(br.read(9))
		if nch == 1 {
			br.read(5)
		} else {
			br.read(3)
		}
		for ch := range nch {
			for g := range 4 {
				si.scfsi[ch][g] = br.read(1) == 1
			}
		}
	}
	for gr := range h.granules() {
		for ch := range nch {
			gc := &si.gr[gr][ch]
			gc.part23 = int(br.read(12))
			gc.bigValues = min(int(br.read(9)), 288)
			gc.globalGain = int(br.read(8))
			if h.lsf {
				gc.sfCompress = int(br.read(9))
			} else {
				gc.sfCompress = int(br.read(4))
			}
			if br.read(1) == 1 { // window switching
				gc.blockType = int(br.read(2))
				gc.mixed = br.read(1) == 1
				gc.tableSelect[0] = int(br.read(5))
				gc.tableSelect[1] = int(br.read(5))
				gc.tableSelect[2] = 0
				for w := range 3 {
					gc.subGain[w] = int(br.read(3))
				}
				if gc.blockType == blockNormal {
					return false
				}
				gc.region1, gc.region2 = switchedRegions(h, gc), 576
			} else {
				gc.blockType, gc.mixed = blockNormal, false
				for r := range 3 {
					gc.tableSelect[r] = int(br.read(5))
				}
				gc.subGain = [3]int{}
				r0 := int(br.read(4)) + 1
				r1 := int(br.read(3)) + 1
				gc.region1 = sfbLong[h.rateIdx][min(r0, 22)]
				gc.region2 = sfbLong[h.rateIdx][min(r0+r1, 22)]
			}
			if !h.lsf {
				gc.preflag = br.read(1) == 1
			} else {
				gc.preflag = false // set by the scalefactors' partition
			}
			gc.sfScale = int(br.read(1))
			gc.count1Table = int(br.read(1))
		}
	}
	return true
}

// switchedRegions is where region 1 starts in a window-switched granule,
// where region_count is implicit: 36 values (the first 8 long or 3 short
// bands of MPEG-1), and for the lower rates the band edges the implicit
// counts give (as mpg123 reads 13818-3).
func switchedRegions(h header, gc *granule) int {
	switch {
	case !h.lsf:
		return 36
	case h.mpeg25 && gc.blockType == blockShort && !gc.mixed:
		return sfbLong[h.rateIdx][6]
	case h.mpeg25:
		return sfbLong[h.rateIdx][8]
	case gc.blockType == blockShort:
		return 36
	default:
		return 54
	}
}
