package mp3

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds the decoder damaged and made-up input as a file and as
// a stream, reads and seeks. An error is an answer; a panic, a hang or an
// output sample that checkPCM refuses is a bug.
func FuzzDecode(f *testing.F) {
	// Small seeds: the fuzzer minimises every new input it keeps, which
	// for frames of a kilobyte and more takes most of a short run.
	for _, s := range []genStream{
		{version: 3, sri: 2, bri: 6, mode: modeJoint, modeExt: 3, mixed: true, sparse: true},
		{version: 2, sri: 0, bri: 6, mode: modeJoint, modeExt: 1, crc: true, sparse: true},
		{version: 0, sri: 2, bri: 4, mode: modeMono, sparse: true},
		// Intensity positions 7..15 only: before they were decoded as
		// left/right, position 9 gave NaN and values of 1e15.
		{version: 3, sri: 1, bri: 6, mode: modeJoint, modeExt: 1, mixed: true, sparse: true, illegalIS: true},
		// The largest gain and escapes: silence, beyond xrBound.
		{version: 3, sri: 1, bri: 14, mode: modeJoint, modeExt: 2, sparse: true, level: loudLevel},
	} {
		g := &generator{r: rand.New(rand.NewPCG(5, 5)), s: s, amp: 40}
		data := g.stream(3)
		f.Add(data)
		f.Add(withInfoFrame(data))
	}
	if seed, err := os.ReadFile(filepath.Join("..", "testdata", "seed", "tone.mp3")); err == nil {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(d *Decoder) {
			buf := make([]float32, 2000)
			for range 50 {
				n, err := d.Read(buf)
				if err := checkPCM(buf[:n]); err != nil {
					t.Fatal(err)
				}
				if err != nil {
					break
				}
			}
		}
		if d, err := NewFile(bytes.NewReader(data), int64(len(data))); err == nil {
			check(d)
			for _, p := range []int64{d.Length() / 2, 0, d.Length()} {
				if err := d.SeekSample(p); err != nil {
					t.Fatalf("seek %d of %d: %v", p, d.Length(), err)
				}
				check(d)
			}
		}
		if d, err := NewStream(bytes.NewReader(data)); err == nil {
			check(d)
		}
	})
}

// pcmBound is the largest magnitude the decoder may output. Beyond full
// scale is what loud or damaged frames give (the player's guard clamps
// it); 1e9, 180 dB above it, no encoder's stream comes near: beyond it, or
// a value that is no finite number, the decoder computes garbage (an
// illegal intensity position gave 4.5e15).
const pcmBound = 1e9

// checkPCM reports output the decoder must never produce.
func checkPCM(pcm []float32) error {
	for i, v := range pcm {
		if !(v >= -pcmBound && v <= pcmBound) {
			return fmt.Errorf("value %d of the output is %g", i, v)
		}
	}
	return nil
}

// withInfoFrame puts an Info frame with a LAME header before frames.
func withInfoFrame(frames []byte) []byte {
	h, ok := parseHeader(binary.BigEndian.Uint32(frames))
	if !ok {
		return frames
	}
	info := make([]byte, h.size)
	copy(info, frames[:4])
	info[2] &^= 2 // no padding
	info = info[:h.size-h.padding]
	x := 4 + h.sideInfo
	copy(info[x:], "Info")
	binary.BigEndian.PutUint32(info[x+4:], 3)
	n := 0
	for off := 0; off+4 <= len(frames); n++ {
		fh, ok := parseHeader(binary.BigEndian.Uint32(frames[off:]))
		if !ok {
			break
		}
		off += fh.size
	}
	binary.BigEndian.PutUint32(info[x+8:], uint32(n))
	binary.BigEndian.PutUint32(info[x+12:], uint32(len(frames)+len(info)))
	if l := x + 16; l+24 <= len(info) {
		copy(info[l:], "LAME3.100")
		info[l+21], info[l+22], info[l+23] = 0x24, 0x02, 0x40 // delay 576, padding 576
	}
	return append(info, frames...)
}

// The test frames with an Info header decode to the length it names.
func TestInfoHeader(t *testing.T) {
	g := &generator{r: rand.New(rand.NewPCG(5, 5)), s: genStream{version: 3, sri: 0, bri: 14, mode: modeStereo}, amp: 40}
	data := withInfoFrame(g.stream(10))
	d, err := NewFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(10*1152 - 576 - 576); d.Length() != want {
		t.Errorf("Length %d, want %d", d.Length(), want)
	}
	if got := decodeAll(t, d); int64(len(got)/2) != d.Length() {
		t.Errorf("decoded %d samples, Length %d", len(got)/2, d.Length())
	}
	// A stream trims the delay but plays to its end.
	s, err := NewStream(io.MultiReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := int64(len(decodeAll(t, s))/2), int64(10*1152-576-529); got != want {
		t.Errorf("as a stream %d samples, want %d", got, want)
	}
}
