package mp4

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// sampleTable is a track's stbl: time-to-sample and sample-to-chunk runs in
// memory (a few entries in real files), sample sizes and chunk offsets left
// in the file.
type sampleTable struct {
	samples  int
	duration uint64
	stts     []run // sample count, delta
	sttsEnd  []int // first sample after each stts run
	stsc     []chunkRun
	fixed    uint32 // the size of every sample, or 0 for a table
	sizeBits int    // 32, or 4/8/16 for stz2
	sizes    int64  // offset of the size table in the file
	chunks   int
	co64     bool
	offsets  int64 // offset of the chunk offset table
}

type run struct{ count, delta uint32 }

// chunkRun is an stsc entry with the first sample it covers.
type chunkRun struct {
	firstChunk, perChunk uint32
	firstSample          int
}

func (st *sampleTable) read(rd *reader, stbl box) error {
	kids, err := rd.children(stbl.start, stbl.end)
	if err != nil {
		return err
	}
	if err := st.readSizes(rd, kids); err != nil {
		return err
	}
	if err := st.readTimes(rd, kids); err != nil {
		return err
	}
	if err := st.readChunks(rd, kids); err != nil {
		return err
	}
	return nil
}

func (st *sampleTable) readSizes(rd *reader, kids []box) error {
	var head [12]byte
	if b, ok := find(kids, "stsz"); ok {
		if b.size() < 12 {
			return fmt.Errorf("%w: stsz of %d bytes", ErrCorrupt, b.size())
		}
		if err := rd.readAt(head[:], b.start); err != nil {
			return err
		}
		st.fixed = binary.BigEndian.Uint32(head[4:8])
		st.samples = int(binary.BigEndian.Uint32(head[8:12]))
		st.sizeBits, st.sizes = 32, b.start+12
		if st.fixed == 0 && int64(st.samples)*4 > b.size()-12 {
			return fmt.Errorf("%w: stsz of %d bytes for %d samples", ErrCorrupt, b.size(), st.samples)
		}
		return nil
	}
	if b, ok := find(kids, "stz2"); ok {
		if b.size() < 12 {
			return fmt.Errorf("%w: stz2 of %d bytes", ErrCorrupt, b.size())
		}
		if err := rd.readAt(head[:], b.start); err != nil {
			return err
		}
		st.sizeBits = int(head[7])
		st.samples = int(binary.BigEndian.Uint32(head[8:12]))
		st.sizes = b.start + 12
		if st.sizeBits != 4 && st.sizeBits != 8 && st.sizeBits != 16 {
			return fmt.Errorf("%w: stz2 field size %d", ErrCorrupt, st.sizeBits)
		}
		if (int64(st.samples)*int64(st.sizeBits)+7)/8 > b.size()-12 {
			return fmt.Errorf("%w: stz2 too short for %d samples", ErrCorrupt, st.samples)
		}
		return nil
	}
	return fmt.Errorf("%w: no sample sizes", ErrCorrupt)
}

func (st *sampleTable) readTimes(rd *reader, kids []box) error {
	b, ok := find(kids, "stts")
	if !ok {
		return fmt.Errorf("%w: no stts", ErrCorrupt)
	}
	n, err := entryCount(rd, b, 8, true)
	if err != nil {
		return err
	}
	p := make([]byte, n*8)
	if err := rd.readAt(p, b.start+8); err != nil {
		return err
	}
	covered := 0
	for i := range n {
		r := run{binary.BigEndian.Uint32(p[8*i:]), binary.BigEndian.Uint32(p[8*i+4:])}
		if r.count == 0 {
			continue
		}
		if covered+int(r.count) > st.samples || covered+int(r.count) < covered {
			r.count = uint32(st.samples - covered)
		}
		st.stts = append(st.stts, r)
		covered += int(r.count)
		st.sttsEnd = append(st.sttsEnd, covered)
		st.duration += uint64(r.count) * uint64(r.delta)
		if covered == st.samples {
			break
		}
	}
	if covered < st.samples {
		return fmt.Errorf("%w: stts covers %d of %d samples", ErrCorrupt, covered, st.samples)
	}
	return nil
}

func (st *sampleTable) readChunks(rd *reader, kids []box) error {
	var off box
	var ok bool
	if off, ok = find(kids, "stco"); !ok {
		if off, ok = find(kids, "co64"); !ok {
			return fmt.Errorf("%w: no chunk offsets", ErrCorrupt)
		}
		st.co64 = true
	}
	width := 4
	if st.co64 {
		width = 8
	}
	chunks, err := entryCount(rd, off, width, false)
	if err != nil {
		return err
	}
	st.chunks, st.offsets = chunks, off.start+8
	b, ok := find(kids, "stsc")
	if !ok {
		return fmt.Errorf("%w: no stsc", ErrCorrupt)
	}
	n, err := entryCount(rd, b, 12, true)
	if err != nil {
		return err
	}
	p := make([]byte, n*12)
	if err := rd.readAt(p, b.start+8); err != nil {
		return err
	}
	sample := 0
	for i := range n {
		c := chunkRun{firstChunk: binary.BigEndian.Uint32(p[12*i:]), perChunk: binary.BigEndian.Uint32(p[12*i+4:]), firstSample: sample}
		if c.firstChunk == 0 || int64(c.firstChunk) > int64(chunks) || c.perChunk == 0 ||
			(len(st.stsc) > 0 && c.firstChunk <= st.stsc[len(st.stsc)-1].firstChunk) {
			return fmt.Errorf("%w: stsc entry %d", ErrCorrupt, i)
		}
		if len(st.stsc) > 0 {
			prev := st.stsc[len(st.stsc)-1]
			// At most 2^32 chunks of 2^32 samples: int64 holds it.
			next := int64(prev.firstSample) + int64(c.firstChunk-prev.firstChunk)*int64(prev.perChunk)
			sample = int(min(next, int64(st.samples)))
			c.firstSample = sample
		}
		st.stsc = append(st.stsc, c)
		if sample >= st.samples {
			break
		}
	}
	if len(st.stsc) == 0 && st.samples > 0 {
		return fmt.Errorf("%w: empty stsc", ErrCorrupt)
	}
	if len(st.stsc) > 0 {
		last := st.stsc[len(st.stsc)-1]
		if int64(last.firstSample)+(int64(chunks)-int64(last.firstChunk)+1)*int64(last.perChunk) < int64(st.samples) {
			return fmt.Errorf("%w: the chunks hold fewer than %d samples", ErrCorrupt, st.samples)
		}
	}
	return nil
}

// entryCount reads a full box's entry count and checks that the entries fit
// in it.
func entryCount(rd *reader, b box, width int, inMemory bool) (int, error) {
	var h [8]byte
	if b.size() < 8 {
		return 0, fmt.Errorf("%w: %s of %d bytes", ErrCorrupt, b.typ, b.size())
	}
	if err := rd.readAt(h[:], b.start); err != nil {
		return 0, err
	}
	n := int64(binary.BigEndian.Uint32(h[4:]))
	if n*int64(width) > b.size()-8 {
		return 0, fmt.Errorf("%w: %s of %d bytes with %d entries", ErrCorrupt, b.typ, b.size(), n)
	}
	if inMemory && n > maxTableItems {
		return 0, fmt.Errorf("%w: %s with %d entries", ErrUnsupported, b.typ, n)
	}
	return int(n), nil
}

// sampleDuration is sample i's duration.
func (st *sampleTable) sampleDuration(i int) uint32 {
	k := sort.SearchInts(st.sttsEnd, i+1)
	if k >= len(st.stts) {
		return 0
	}
	return st.stts[k].delta
}

// Cursor finds samples in the file. Reading them in order costs a table
// read per block of entries; a jump costs one search and a few reads.
type Cursor struct {
	st *sampleTable
	rd *reader
	// The sample after the last one found, and where it starts.
	next     int
	nextOff  int64
	chunkEnd int // first sample of the next chunk
	// Blocks of the size and offset tables.
	sizeBlock [1024]uint32
	sizeFirst int
	sizeCount int
	offBlock  [256]int64
	offFirst  int
	offCount  int
}

func (st *sampleTable) cursor(rd *reader) *Cursor {
	return &Cursor{st: st, rd: rd, next: -1}
}

// Cursor returns a reader of the audio track's samples.
func (f *File) Cursor() *Cursor { return f.table.cursor(&f.rd) }

// sample returns where sample i is in the file and its size.
func (c *Cursor) sample(i int) (int64, int, error) {
	st := c.st
	if i < 0 || i >= st.samples {
		return 0, 0, fmt.Errorf("%w: sample %d of %d", ErrCorrupt, i, st.samples)
	}
	if i != c.next || i >= c.chunkEnd {
		if err := c.seek(i); err != nil {
			return 0, 0, err
		}
	}
	size, err := c.size(i)
	if err != nil {
		return 0, 0, err
	}
	off := c.nextOff
	if !within(off, int64(size), c.rd.size) {
		c.next = -1 // the next sample is found from its chunk again
		return 0, 0, fmt.Errorf("%w: sample %d at %d+%d beyond the file", ErrCorrupt, i, off, size)
	}
	c.next, c.nextOff = i+1, off+int64(size)
	return off, size, nil
}

// Sample is sample i's place in the file and size.
func (c *Cursor) Sample(i int) (off int64, size int, err error) { return c.sample(i) }

// seek positions the cursor at sample i: its chunk's offset plus the sizes
// of the samples before it in the chunk.
func (c *Cursor) seek(i int) error {
	st := c.st
	k := sort.Search(len(st.stsc), func(k int) bool { return st.stsc[k].firstSample > i }) - 1
	if k < 0 {
		return fmt.Errorf("%w: sample %d before the first chunk", ErrCorrupt, i)
	}
	r := st.stsc[k]
	chunk := int(r.firstChunk) - 1 + (i-r.firstSample)/int(r.perChunk)
	first := r.firstSample + (i-r.firstSample)/int(r.perChunk)*int(r.perChunk)
	if chunk >= st.chunks {
		return fmt.Errorf("%w: sample %d in chunk %d of %d", ErrCorrupt, i, chunk, st.chunks)
	}
	off, err := c.chunkOffset(chunk)
	if err != nil {
		return err
	}
	if st.fixed != 0 {
		// One step, however many samples a chunk claims to hold.
		if off < 0 || int64(i-first) > (math.MaxInt64-off)/int64(st.fixed) {
			return fmt.Errorf("%w: sample %d beyond the file", ErrCorrupt, i)
		}
		off += int64(i-first) * int64(st.fixed)
	}
	for j := first; j < i && st.fixed == 0; j++ {
		n, err := c.size(j)
		if err != nil {
			return err
		}
		if off < 0 || int64(n) > math.MaxInt64-off {
			return fmt.Errorf("%w: sample %d beyond the file", ErrCorrupt, i)
		}
		off += int64(n)
	}
	c.next, c.nextOff, c.chunkEnd = i, off, first+int(r.perChunk)
	return nil
}

func (c *Cursor) size(i int) (int, error) {
	st := c.st
	if st.fixed != 0 {
		return int(st.fixed), nil
	}
	if i < c.sizeFirst || i >= c.sizeFirst+c.sizeCount {
		n := min(len(c.sizeBlock), st.samples-i)
		bytes := (n*st.sizeBits + 7) / 8
		if st.sizeBits == 4 {
			bytes = (i+n+1)/2 - i/2
		}
		var buf [4096]byte
		start := st.sizes + int64(i)*int64(st.sizeBits)/8
		if err := c.rd.readAt(buf[:bytes], start); err != nil {
			return 0, err
		}
		for j := range n {
			switch st.sizeBits {
			case 32:
				c.sizeBlock[j] = binary.BigEndian.Uint32(buf[4*j:])
			case 16:
				c.sizeBlock[j] = uint32(binary.BigEndian.Uint16(buf[2*j:]))
			case 8:
				c.sizeBlock[j] = uint32(buf[j])
			case 4:
				b := buf[(i+j)/2-i/2] // nibbles count from the table's start
				if (i+j)%2 == 0 {
					c.sizeBlock[j] = uint32(b >> 4)
				} else {
					c.sizeBlock[j] = uint32(b & 15)
				}
			}
		}
		c.sizeFirst, c.sizeCount = i, n
	}
	return int(c.sizeBlock[i-c.sizeFirst]), nil
}

func (c *Cursor) chunkOffset(k int) (int64, error) {
	st := c.st
	if k < c.offFirst || k >= c.offFirst+c.offCount {
		n := min(len(c.offBlock), st.chunks-k)
		width := 4
		if st.co64 {
			width = 8
		}
		var buf [256 * 8]byte
		if err := c.rd.readAt(buf[:n*width], st.offsets+int64(k)*int64(width)); err != nil {
			return 0, err
		}
		for j := range n {
			if st.co64 {
				c.offBlock[j] = int64(binary.BigEndian.Uint64(buf[8*j:]))
			} else {
				c.offBlock[j] = int64(binary.BigEndian.Uint32(buf[4*j:]))
			}
		}
		c.offFirst, c.offCount = k, n
	}
	return c.offBlock[k-c.offFirst], nil
}
