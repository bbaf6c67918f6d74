package mp3

import "io"

// input buffers what the decoder reads: from a file at offsets it keeps
// itself, or from a stream as it comes.
type input struct {
	ra  io.ReaderAt // a file, or
	r   io.Reader   // a stream
	end int64       // file: where the audio ends

	buf    []byte
	lo, hi int   // buf[lo:hi] is read and not yet consumed
	off    int64 // offset of buf[lo] in the file or stream
	eof    bool
	err    error
}

// ensure makes n bytes available at buf[lo:] if the input has them, and
// returns how many are.
func (in *input) ensure(n int) int {
	for in.hi-in.lo < n && !in.eof && in.err == nil {
		if in.lo > 0 {
			in.hi = copy(in.buf, in.buf[in.lo:in.hi])
			in.lo = 0
		}
		room := in.buf[in.hi:]
		var k int
		var err error
		if in.ra != nil {
			at := in.off + int64(in.hi)
			if at >= in.end {
				in.eof = true
				break
			}
			room = room[:min(int64(len(room)), in.end-at)]
			k, err = in.ra.ReadAt(room, at)
			if err == io.EOF && k > 0 {
				err = nil
			}
		} else {
			k, err = in.r.Read(room)
		}
		in.hi += k
		switch {
		case err == io.EOF:
			in.eof = true
		case err != nil:
			in.err = err
		case k == 0 && in.ra != nil:
			in.eof = true // a file that reads nothing short of its end
		}
	}
	return in.hi - in.lo
}

// skip consumes n bytes, reading past those buffered if needed.
func (in *input) skip(n int64) {
	for n > 0 {
		k := min(n, int64(in.hi-in.lo))
		in.lo += int(k)
		in.off += k
		n -= k
		if n == 0 {
			return
		}
		if in.ra != nil {
			in.off += n
			in.lo, in.hi = 0, 0
			return
		}
		if in.ensure(1) == 0 {
			return
		}
	}
}

// unread gives back the last n bytes consumed, which are still buffered.
func (in *input) unread(n int) {
	in.lo -= n
	in.off -= int64(n)
}

// seek moves a file's input to offset off, within what is buffered when
// it can (a seek reads the frames before its target twice).
func (in *input) seek(off int64) {
	if base := in.off - int64(in.lo); in.err == nil && off >= base && off <= base+int64(in.hi) {
		in.lo, in.off = int(off-base), off
		return
	}
	in.off, in.lo, in.hi = off, 0, 0
	in.eof, in.err = false, nil
}

// fail is why no more bytes came: io.EOF or the read error.
func (in *input) fail() error {
	if in.err != nil {
		return in.err
	}
	return io.EOF
}
