package decode

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/internal/fault"
)

// Media files come from uploads, downloads and USB sticks: they are
// untrusted, and so are the third-party decoders reading them. Every call
// into a decoder therefore runs behind this boundary: a panic becomes an
// error for that file, every read is charged to a budget of bytes and time,
// and what comes out is checked before the player sees it.

var (
	// ErrCorrupt reports a file whose content contradicts itself: a header
	// that lies about sizes, or a decoder that failed on it.
	ErrCorrupt = fault.New(fault.Invalid, "damaged media file")
	// ErrBudget reports a decoder that read far more than the file warrants
	// or took too long; it is cut off.
	ErrBudget = fault.New(fault.Invalid, "decoder exceeded its budget")
)

// PanicError is a decoder's panic, caught at the boundary. Site names where
// it happened so the upstream bug can be found.
type PanicError struct {
	Op    string // open, stream, seek, tags …
	Value string
	Site  string // file:line (function) of the panicking code
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("%s: decoder failed (%s) at %s", e.Op, e.Value, e.Site)
}

func (e *PanicError) Unwrap() error { return ErrCorrupt }

// contain runs f and turns a panic into a *PanicError.
func contain(op string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Op: op, Value: fmt.Sprint(r), Site: panicSite()}
		}
	}()
	return f()
}

// panicSite is the innermost frame of the panicking goroutine outside the
// runtime, called from contain's deferred function.
func panicSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		fr, more := frames.Next()
		if !strings.HasPrefix(fr.Function, "runtime.") && fr.Function != "" {
			file := fr.File
			if i := strings.LastIndex(file, "/pkg/mod/"); i >= 0 {
				file = file[i+len("/pkg/mod/"):]
			}
			return fmt.Sprintf("%s:%d (%s)", file, fr.Line, fr.Function)
		}
		if !more {
			return "unknown"
		}
	}
}

// Budgets. They are far above what any real file needs (an MP3 of variable
// bitrate without a header is read whole at open to count its frames; an
// SD card on a Pi reads at 20 MB/s or more), so they only ever stop a
// decoder that has gone wrong.
const (
	// readCost is charged per read on top of the bytes, so that a decoder
	// retrying a read at the end of the file forever runs out too.
	readCost       = 512
	streamBytes    = 16 << 20
	streamTime     = 10 * time.Second
	baseOpenBytes  = 4 << 20
	baseOpenTime   = 10 * time.Second
	openBytesPerMB = time.Second // added time per MB of file
)

// openBudget is what opening or seeking in a file of size bytes may cost:
// reading it twice over, at 1 MB/s.
func openBudget(size int64) (int64, time.Duration) {
	return baseOpenBytes + 2*size, baseOpenTime + time.Duration(size>>20)*openBytesPerMB
}

// source is a media file as the decoders see it. Every read is charged to
// the budget of the call in progress; once it is spent, reads fail, and
// spent stays set even if a decoder swallows that error.
type source struct {
	f        file
	size     int64
	left     int64
	deadline time.Time
	spent    bool
	closed   bool
	chapter  int // of an audiobook, from 1; 0 for the whole file
}

// file is an open media file; tests and fuzzing use bytes in memory.
type file interface {
	io.ReadSeeker
	io.ReaderAt
	io.Closer
}

func openSource(path string) (*source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return sourceOf(f)
}

// sourceOf makes an open file a source; it is closed on failure.
func sourceOf(f *os.File) (*source, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: not a regular file", ErrUnsupported)
	}
	return &source{f: f, size: st.Size()}, nil
}

// budget starts a new call allowed to read bytes within d.
func (s *source) budget(bytes int64, d time.Duration) {
	s.left, s.deadline, s.spent = bytes, time.Now().Add(d), false
}

func (s *source) charge(n int) error {
	s.left -= int64(n) + readCost
	if s.left < 0 || time.Now().After(s.deadline) {
		s.spent = true
	}
	if s.spent {
		return ErrBudget
	}
	return nil
}

func (s *source) Read(p []byte) (int, error) {
	if err := s.charge(0); err != nil {
		return 0, err
	}
	n, err := s.f.Read(p)
	s.left -= int64(n)
	return n, err
}

func (s *source) ReadAt(p []byte, off int64) (int, error) {
	if err := s.charge(0); err != nil {
		return 0, err
	}
	n, err := s.f.ReadAt(p, off)
	s.left -= int64(n)
	return n, err
}

func (s *source) Seek(off int64, whence int) (int64, error) {
	if err := s.charge(0); err != nil {
		return 0, err
	}
	return s.f.Seek(off, whence)
}

// Close closes the file once; decoders close their reader on some errors
// and the boundary closes it again after a panic.
func (s *source) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.f.Close()
}

// guarded is a decoder behind the boundary: calls are contained, the first
// failure ends the stream for good and is what Err reports.
type guarded struct {
	s      beep.StreamSeekCloser
	src    *source
	length int
	err    error
	// clamped is what the guard changed in the decoder's output.
	clamped clamps
}

func (g *guarded) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

func (g *guarded) Stream(samples [][2]float64) (n int, ok bool) {
	if g.err != nil || len(samples) == 0 {
		return 0, g.err == nil
	}
	g.src.budget(streamBytes, streamTime)
	if err := contain("stream", func() error { n, ok = g.s.Stream(samples); return nil }); err != nil {
		g.fail(err)
		return 0, false
	}
	if g.src.spent {
		g.fail(fmt.Errorf("stream: %w", ErrBudget))
		return 0, false
	}
	if n < 0 || n > len(samples) {
		g.fail(fmt.Errorf("stream: %w: decoder returned %d samples for %d", ErrCorrupt, n, len(samples)))
		return 0, false
	}
	g.clamped.sanitize(samples[:n])
	return n, ok
}

// clamps is what sanitize had to change in a stream's output: values that
// were no finite number (NaN, ±Inf, made silence or full scale), values
// beyond full scale, and the largest finite magnitude among those. The
// guard hides a decoder's garbage from the speaker; this keeps it visible
// to the tests (the fuzz targets fail on it, see fuzz_test.go).
type clamps struct {
	nonFinite int
	over      int
	peak      float64
}

// sanitize keeps the output within full scale: a damaged file must not
// reach the speaker as NaN or as values beyond ±1. What it changes is
// counted in c.
//
// It runs on every sample played, so the common case is one test per
// frame: |v| <= 1 is false for NaN as well as beyond full scale.
func (c *clamps) sanitize(samples [][2]float64) {
	for i := range samples {
		if math.Abs(samples[i][0]) <= 1 && math.Abs(samples[i][1]) <= 1 {
			continue
		}
		for ch := range 2 {
			v := samples[i][ch]
			switch {
			case v != v: // NaN
				samples[i][ch] = 0
				c.nonFinite++
			case v > 1 || v < -1:
				samples[i][ch] = max(-1, min(v, 1))
				if math.IsInf(v, 0) {
					c.nonFinite++
				} else {
					c.over++
					c.peak = max(c.peak, math.Abs(v))
				}
			}
		}
	}
}

func (g *guarded) Err() error {
	if g.err != nil {
		return g.err
	}
	var err error
	if perr := contain("stream", func() error { err = g.s.Err(); return nil }); perr != nil {
		g.fail(perr)
		return perr
	}
	return err
}

func (g *guarded) Len() int { return g.length }

func (g *guarded) Position() int {
	var p int
	if err := contain("position", func() error { p = g.s.Position(); return nil }); err != nil {
		g.fail(err)
		return 0
	}
	return max(0, min(p, g.length))
}

func (g *guarded) Seek(p int) error {
	if g.err != nil {
		return g.err
	}
	if p < 0 || p > g.length {
		return fmt.Errorf("seek %d outside 0..%d", p, g.length)
	}
	g.src.budget(openBudget(g.src.size))
	var err error
	if perr := contain("seek", func() error { err = g.s.Seek(p); return nil }); perr != nil {
		// The decoder's state is unknown after a panic: end the stream.
		g.fail(perr)
		return perr
	}
	if g.src.spent {
		g.fail(fmt.Errorf("seek: %w", ErrBudget))
		return g.err
	}
	return err
}

func (g *guarded) Close() error {
	err := contain("close", g.s.Close)
	if cerr := g.src.Close(); err == nil {
		err = cerr
	}
	return err
}

// streamLength asks a freshly opened decoder for its length, which must be
// sane: the player divides by it and seeks within it.
func streamLength(s beep.StreamSeekCloser, format beep.Format) (int, error) {
	var n int
	if err := contain("open", func() error { n = s.Len(); return nil }); err != nil {
		return 0, err
	}
	// A day of audio is far beyond any file on the box; more is a lie.
	if n < 0 || float64(n) > 24*3600*float64(format.SampleRate) {
		return 0, fmt.Errorf("%w: length %d samples", ErrCorrupt, n)
	}
	return n, nil
}

// spliced is a file as a decoder should see it: a header the boundary
// wrote from validated values, followed by a region of the real file. WAV
// and FLAC decoders get this view, so they never parse a header we did not
// check.
type spliced struct {
	head []byte
	body *io.SectionReader
	src  *source
	pos  int64
}

func newSpliced(head []byte, src *source, off, n int64) *spliced {
	return &spliced{head: head, body: io.NewSectionReader(src, off, n), src: src}
}

func (s *spliced) size() int64 { return int64(len(s.head)) + s.body.Size() }

func (s *spliced) Read(p []byte) (int, error) {
	if s.pos < int64(len(s.head)) {
		n := copy(p, s.head[s.pos:])
		s.pos += int64(n)
		return n, nil
	}
	n, err := s.body.ReadAt(p, s.pos-int64(len(s.head)))
	s.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (s *spliced) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += s.pos
	case io.SeekEnd:
		off += s.size()
	}
	if off < 0 {
		return 0, errors.New("seek before start")
	}
	if err := s.src.charge(0); err != nil {
		return 0, err
	}
	s.pos = off
	return off, nil
}

func (s *spliced) Close() error { return s.src.Close() }
