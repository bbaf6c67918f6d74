package decode

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The fuzz targets open, decode and seek every format, and read tags, on
// mutated real files (testdata/seed, made by testdata/make-fixtures.sh).
// An error is a correct answer to a bad file; what must never happen is a
// panic escaping the boundary, a fatal error (an allocation the box cannot
// take), a call that does not return, or a decoder handing the guard
// output it should never have had to clamp (checkRaw): the guard keeps
// that from the speaker, so a check of the samples after it could never
// fail. `make fuzz` runs each briefly.
//
// With STORYBOX_FUZZ_STRICT=1 a contained decoder panic fails too, to find
// the upstream bugs the boundary is hiding.

func FuzzWAV(f *testing.F)     { fuzzDecode(f, "tone.wav", "tone-extensible.wav") }
func FuzzMP3(f *testing.F)     { fuzzDecode(f, "tone.mp3", "tone-notag.mp3") }
func FuzzFLAC(f *testing.F)    { fuzzDecode(f, "tone.flac") }
func FuzzVorbis(f *testing.F)  { fuzzDecode(f, "tone.ogg") }
func FuzzOggFLAC(f *testing.F) { fuzzDecode(f, "tone.oga") }
func FuzzOpus(f *testing.F)    { fuzzDecode(f, "tone.opus") }

func FuzzTags(f *testing.F) {
	addSeeds(f, "tone.mp3", "tone.flac", "tone.oga", "tone.ogg", "tone.opus")
	f.Fuzz(func(t *testing.T, data []byte) {
		watchdog(t, func() {
			tags, err := readTagsFrom(memSource(data))
			check(t, err)
			if err == nil && (len(tags.Title) > 512 || len(tags.Artist) > 512 || len(tags.Album) > 512) {
				t.Errorf("tag values of %d, %d, %d bytes", len(tags.Title), len(tags.Artist), len(tags.Album))
			}
		})
	})
}

// FuzzDuration reads durations from the headers, as the library scan does,
// and opens the files whose headers do not tell.
func FuzzDuration(f *testing.F) {
	addSeeds(f, "tone.mp3", "tone-notag.mp3", "tone.flac", "tone.oga", "tone.ogg", "tone.wav")
	f.Fuzz(func(t *testing.T, data []byte) {
		watchdog(t, func() {
			d, err := duration(memSource(data))
			check(t, err)
			if err == nil && (d < 0 || d > 24*3600) {
				t.Errorf("duration %v s", d)
			}
		})
	})
}

func fuzzDecode(f *testing.F, seeds ...string) {
	addSeeds(f, seeds...)
	f.Fuzz(func(t *testing.T, data []byte) {
		watchdog(t, func() { exercise(t, data) })
	})
}

// exercise opens, decodes and seeks the way the player does, and checks
// what the boundary promises: sane lengths, positions and samples.
func exercise(t *testing.T, data []byte) {
	g, format, err := open(memSource(data))
	check(t, err)
	if err != nil {
		return
	}
	defer g.Close()
	if format.SampleRate <= 0 || format.NumChannels <= 0 || g.Len() < 0 {
		t.Errorf("format %+v, length %d", format, g.Len())
		return
	}
	buf := make([][2]float64, 1024)
	play := func(calls int) {
		for range calls {
			n, ok := g.Stream(buf)
			if n < 0 || n > len(buf) {
				t.Errorf("Stream returned %d", n)
				return
			}
			for _, s := range buf[:n] {
				if !(s[0] >= -1 && s[0] <= 1 && s[1] >= -1 && s[1] <= 1) {
					t.Errorf("sample %v beyond full scale", s)
					return
				}
			}
			if !ok {
				break
			}
		}
		check(t, g.Err())
	}
	play(64)
	for _, p := range []int{g.Len() / 2, g.Len(), 0} {
		if err := g.Seek(p); err != nil {
			check(t, err)
			continue
		}
		if pos := g.Position(); pos < 0 || pos > g.Len() {
			t.Errorf("Position %d after Seek(%d), length %d", pos, p, g.Len())
			return
		}
		play(8)
	}
	if err := checkRaw(g.clamped); err != nil {
		t.Error(err)
	}
}

// rawBound is the largest magnitude a decoder may hand the guard. Values
// beyond full scale are what loud or damaged frames of a lossy codec give,
// and the guard clamps them; 1e9 (180 dB above full scale) no stream an
// encoder wrote comes near. Beyond it, or a value that is no finite
// number, a decoder is computing garbage: an illegal MP3 intensity
// position gave 4.5e15, an unbounded AAC noise energy 3e9.
const rawBound = 1e9

// checkRaw reports what the guard should never have had to clamp.
func checkRaw(c clamps) error {
	switch {
	case c.nonFinite > 0:
		return fmt.Errorf("the decoder produced %d values that are no finite number", c.nonFinite)
	case c.peak > rawBound:
		return fmt.Errorf("the decoder produced a value of %g, beyond %g", c.peak, float64(rawBound))
	}
	return nil
}

// check fails in strict mode on a contained panic.
func check(t *testing.T, err error) {
	var p *PanicError
	if os.Getenv("STORYBOX_FUZZ_STRICT") != "" && errors.As(err, &p) {
		t.Errorf("decoder panic: %v", err)
	}
}

// watchdog fails an input that keeps a decoder busy: a loop the budgets do
// not catch. The fuzzer reports the crash and keeps the input.
func watchdog(t *testing.T, f func()) {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		panic("decoder did not return within 20 s")
	}
}

func addSeeds(f *testing.F, names ...string) {
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", "seed", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		for _, v := range damaged(data) {
			f.Add(v)
		}
	}
}

// damaged returns broken variants of a good file: truncated, its sizes and
// counts overwritten, garbage after the first header bytes.
func damaged(data []byte) [][]byte {
	var out [][]byte
	out = append(out, data[:len(data)/2], data[:min(len(data), 60)])
	for _, at := range []int{4, 16, 40, 44} {
		if at+4 <= len(data) {
			v := bytes.Clone(data)
			copy(v[at:], []byte{0xff, 0xff, 0xff, 0x7f})
			out = append(out, v)
		}
	}
	v := bytes.Clone(data)
	for i := min(len(v), 200); i < len(v); i++ {
		v[i] = byte(i*131 + 7)
	}
	return append(out, v)
}

type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

func memSource(data []byte) *source {
	return &source{f: memFile{bytes.NewReader(data)}, size: int64(len(data))}
}
