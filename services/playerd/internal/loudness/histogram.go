package loudness

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/storybox/storybox/services/internal/fault"
)

// A Histogram counts loudness values (of 400 ms blocks or 3 s windows) in
// bins of BinWidth LU from the absolute gate, AbsoluteGate, up to +10 LUFS;
// a louder value counts in the top bin. Values below the gate are not
// kept: every gate of BS.1770 and Tech 3342 drops them first.
//
// Bin size and error bound: a value is represented by its bin's centre, so
// each is known to ±BinWidth/2 = ±0.05 LU, and a power mean of values that
// the gates classify alike is within ±0.05 LU of the exact one. A value
// within half a bin of a relative gate may be classed otherwise than exact
// gating would class it; for programme material that moves a result by far
// less (TestCombineMatchesOneMeter: within 0.05 LU). The storage is the
// reason for 0.1 LU bins rather than 0.01: a 3-minute track's blocks take
// a few hundred bytes (MarshalJSON), a 10,000-track library a few MB.
type Histogram struct {
	lo     int      // bin of counts[0]
	counts []uint32 // from lo to the highest bin in use
}

// Histogram geometry.
const (
	AbsoluteGate = -70.0 // LUFS, BS.1770-4's absolute gate
	BinWidth     = 0.1   // LU
	topLoudness  = 10.0
	bins         = int((topLoudness - AbsoluteGate) / BinWidth)
)

// binOf is the bin of loudness l (≥ AbsoluteGate).
func binOf(l float64) int {
	return min(max(int(math.Floor((l-AbsoluteGate)/BinWidth)), 0), bins-1)
}

// binCentre is the loudness a bin stands for.
func binCentre(i int) float64 { return AbsoluteGate + (float64(i)+0.5)*BinWidth }

// Count is the number of values.
func (h Histogram) Count() int {
	n := 0
	for _, c := range h.counts {
		n += int(c)
	}
	return n
}

// Merge adds o's values to h.
func (h *Histogram) Merge(o Histogram) {
	if len(o.counts) == 0 {
		return
	}
	if len(h.counts) == 0 {
		h.lo, h.counts = o.lo, append([]uint32(nil), o.counts...)
		return
	}
	lo := min(h.lo, o.lo)
	hi := max(h.lo+len(h.counts), o.lo+len(o.counts))
	c := make([]uint32, hi-lo)
	for i, n := range h.counts {
		c[h.lo-lo+i] += n
	}
	for i, n := range o.counts {
		c[o.lo-lo+i] += n
	}
	h.lo, h.counts = lo, c
}

// dense is h over all bins.
func (h Histogram) dense() []uint32 {
	d := make([]uint32, bins)
	copy(d[h.lo:], h.counts)
	return d
}

// sparse keeps the bins of d in use.
func sparse(d []uint32) Histogram {
	lo, hi := 0, len(d)
	for lo < hi && d[lo] == 0 {
		lo++
	}
	for hi > lo && d[hi-1] == 0 {
		hi--
	}
	if lo == hi {
		return Histogram{}
	}
	return Histogram{lo: lo, counts: append([]uint32(nil), d[lo:hi]...)}
}

// MarshalJSON writes h as one compact string: base64 of unsigned varints,
// the first bin in use, the number of bins, then each bin's count.
func (h Histogram) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2*binary.MaxVarintLen32+len(h.counts)*2)
	b = binary.AppendUvarint(b, uint64(h.lo))
	b = binary.AppendUvarint(b, uint64(len(h.counts)))
	for _, c := range h.counts {
		b = binary.AppendUvarint(b, uint64(c))
	}
	return json.Marshal(base64.RawStdEncoding.EncodeToString(b))
}

// ErrHistogram reports a stored histogram that cannot be read.
var ErrHistogram = fault.New(fault.Invalid, "loudness: unreadable histogram")

// UnmarshalJSON reads what MarshalJSON wrote.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%w: %w", ErrHistogram, err)
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHistogram, err)
	}
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	lo, ok1 := next()
	n, ok2 := next()
	if !ok1 || !ok2 || lo+n > uint64(bins) {
		return fmt.Errorf("%w: bins %d+%d", ErrHistogram, lo, n)
	}
	counts := make([]uint32, n)
	for i := range counts {
		c, ok := next()
		if !ok || c > math.MaxUint32 {
			return fmt.Errorf("%w: bin %d", ErrHistogram, i)
		}
		counts[i] = uint32(c)
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d bytes left over", ErrHistogram, len(b))
	}
	*h = sparse(append(make([]uint32, lo), counts...)[:lo+n])
	return nil
}

// power is the mean-square level that loudness l stands for (the inverse
// of loudnessOf).
func power(l float64) float64 { return math.Pow(10, (l+0.691)/10) }

// loudnessOf is BS.1770's loudness of a K-weighted, channel-weighted mean
// square.
func loudnessOf(z float64) float64 { return -0.691 + 10*math.Log10(z) }

// gated is the power mean of the values of counts (dense bins; sums[i], when
// not nil, the exact sum of bin i's powers) after a relative gate rel LU
// below the power mean of them all. ok is false when no value is left.
func gated(counts []uint32, sums []float64, rel float64) (mean float64, cut int, ok bool) {
	binPower := func(i int) float64 {
		if sums != nil {
			return sums[i]
		}
		return float64(counts[i]) * power(binCentre(i))
	}
	var z float64
	var n int
	for i, c := range counts {
		if c != 0 {
			z += binPower(i)
			n += int(c)
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	threshold := loudnessOf(z/float64(n)) + rel
	// A bin is in when its centre is: its values are within half a bin of it.
	cut = max(0, int(math.Ceil((threshold-AbsoluteGate)/BinWidth-0.5)))
	z, n = 0, 0
	for i := cut; i < len(counts); i++ {
		if counts[i] != 0 {
			z += binPower(i)
			n += int(counts[i])
		}
	}
	if n == 0 {
		return 0, cut, false
	}
	return z / float64(n), cut, true
}

// integrated is BS.1770-4's gated loudness of the blocks in counts, or
// AbsoluteGate when none passes the gates.
func integrated(counts []uint32, sums []float64) float64 {
	z, _, ok := gated(counts, sums, -10)
	if !ok {
		return AbsoluteGate
	}
	return loudnessOf(z)
}

// loudnessRange is Tech 3342's LRA of the short-term values in counts: the
// spread between their 10th and 95th percentiles after a relative gate
// 20 LU below their power mean. 0 when nothing passes the gates.
func loudnessRange(counts []uint32) float64 {
	_, cut, ok := gated(counts, nil, -20)
	if !ok {
		return 0
	}
	n := 0
	for _, c := range counts[cut:] {
		n += int(c)
	}
	percentile := func(p float64) float64 {
		rank := int(math.Round(p * float64(n-1))) // 0-based, nearest rank
		for i := cut; i < len(counts); i++ {
			rank -= int(counts[i])
			if rank < 0 {
				return binCentre(i)
			}
		}
		return binCentre(len(counts) - 1)
	}
	return percentile(0.95) - percentile(0.10)
}
