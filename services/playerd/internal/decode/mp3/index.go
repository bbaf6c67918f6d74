package mp3

// frameIndex remembers where frames start in a file, every stride-th of
// those read so far, so that a seek reads at most stride frame headers
// from a known place. Past maxIndex entries the stride doubles: a day of
// audio costs no more memory than a song's hour.
type frameIndex struct {
	stride int64
	offs   []int64 // offs[i]: where frame i·stride starts
	known  int64   // frames 0..known-1 have been read
	next   int64   // where the search for frame known starts
}

const maxIndex = 4096

func (x *frameIndex) init(first int64) {
	x.stride = 8
	x.offs = make([]int64, 0, maxIndex)
	x.known, x.next = 0, first
}

// record notes that frame n starts at off and ends at end.
func (x *frameIndex) record(n, off, end int64) {
	if n != x.known {
		return
	}
	if n%x.stride == 0 {
		if len(x.offs) == maxIndex {
			for i := range maxIndex / 2 {
				x.offs[i] = x.offs[2*i]
			}
			x.offs = x.offs[:maxIndex/2]
			x.stride *= 2
		}
		if n%x.stride == 0 {
			x.offs = append(x.offs, off)
		}
	}
	x.known, x.next = n+1, end
}

// before is the last frame at or before f whose offset is known: an indexed
// one, or the first not yet read.
func (x *frameIndex) before(f int64) (int64, int64) {
	if f >= x.known {
		return x.known, x.next
	}
	i := f / x.stride
	return i * x.stride, x.offs[i]
}
