package aac

// Huffman decoding by table lookup: the next primaryBits bits index a table
// whose entry is either a symbol and its length or, for longer codes, a
// second table indexed by the bits after them. Two lookups at most decode
// any AAC codeword.

const primaryBits = 9

// An entry is sym<<8 | length for a symbol, subFlag | offset<<8 | bits for a
// second-level table, and 0 for a bit pattern no codeword starts with.
const subFlag = 1 << 31

type huffTable struct {
	t []uint32
}

func newHuffTable(codes []uint32, lens []uint8) huffTable {
	const p = primaryBits
	t := make([]uint32, 1<<p)
	// Longest code per primary prefix sizes that prefix's second table.
	longest := make([]uint8, 1<<p)
	for i, l := range lens {
		if l > p {
			pre := codes[i] >> (l - p)
			longest[pre] = max(longest[pre], l-p)
		}
	}
	for pre, l := range longest {
		if l > 0 {
			t[pre] = subFlag | uint32(len(t))<<8 | uint32(l)
			t = append(t, make([]uint32, 1<<l)...)
		}
	}
	for i, l := range lens {
		c := codes[i]
		if l <= p {
			shift := p - l
			for j := uint32(0); j < 1<<shift; j++ {
				t[c<<shift|j] = uint32(i)<<8 | uint32(l)
			}
			continue
		}
		e := t[c>>(l-p)]
		off, sub := e>>8&0x7fffff, uint8(e&0xff)
		rest := l - p
		low := c & (1<<rest - 1)
		shift := sub - rest
		for j := uint32(0); j < 1<<shift; j++ {
			t[off+(low<<shift|j)] = uint32(i)<<8 | uint32(rest)
		}
	}
	return huffTable{t: t}
}

// decode returns the next symbol, or -1 for bits that start no codeword.
func (h *huffTable) decode(b *bitReader) int {
	e := h.t[b.peek(primaryBits)]
	if e&subFlag != 0 {
		b.skip(primaryBits)
		e = h.t[(e>>8&0x7fffff)+b.peek(uint(e&0xff))]
	}
	if e&0xff == 0 {
		return -1
	}
	b.skip(uint(e & 0xff))
	return int(e >> 8)
}

var (
	sfHuff   huffTable
	specHuff [11]huffTable
)

func init() {
	sfHuff = newHuffTable(sfCodes[:], sfBits[:])
	for i := range specHuff {
		codes := make([]uint32, len(specCodes[i]))
		for j, c := range specCodes[i] {
			codes[j] = uint32(c)
		}
		specHuff[i] = newHuffTable(codes, specBits[i])
	}
}
