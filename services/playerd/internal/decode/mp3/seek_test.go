package mp3

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"testing"
)

// After a seek the decoder reads again the frames the target's bit
// reservoir reaches into and decodes the two granules before it, so what
// follows is exactly what playing through gives.
func TestSeekIsSampleExact(t *testing.T) {
	for _, f := range makeCorpus(t) {
		t.Run(f.name, func(t *testing.T) {
			d := openFile(t, f.path)
			whole := decodeAll(t, d)
			n := d.Length()
			spf := d.spf
			r := rand.New(rand.NewPCG(1, 1))
			targets := []int64{0, 1, spf - 1, spf, spf + 1, 3*spf + 17, n / 2, n - spf, n - 1, n}
			for range 6 {
				targets = append(targets, r.Int64N(n+1))
			}
			buf := make([]float32, 700*f.channels)
			for i, p := range targets {
				// Every other seek is a fresh decoder's first: it knows no
				// frame yet (a constant bitrate computes where to go, a
				// variable one reads the frame headers up to there).
				if i%2 == 1 {
					d = openFile(t, f.path)
				}
				if err := d.SeekSample(p); err != nil {
					t.Fatalf("seek %d: %v", p, err)
				}
				if d.Position() != p {
					t.Fatalf("seek %d: position %d", p, d.Position())
				}
				got := 0
				for got < len(buf) {
					k, err := d.Read(buf[got:])
					got += k
					if err != nil {
						break
					}
				}
				want := whole[min(int64(len(whole)), p*int64(f.channels)):]
				want = want[:min(len(want), len(buf))]
				if got != len(want) {
					t.Fatalf("seek %d: read %d values, want %d", p, got, len(want))
				}
				for i := range want {
					if buf[i] != want[i] {
						t.Fatalf("seek %d: value %d is %v, want %v", p, i, buf[i], want[i])
					}
				}
			}
			if err := d.SeekSample(n + 1); err == nil {
				t.Error("seek past the end accepted")
			}
		})
	}
}

// frames splits a file's audio into frames (after the Info frame).
func frames(t *testing.T, data []byte) [][]byte {
	t.Helper()
	info, err := Inspect(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for off := info.audio; off+4 <= info.end; {
		h, ok := parseHeader(binary.BigEndian.Uint32(data[off:]))
		if !ok || off+int64(h.size) > info.end {
			t.Fatalf("no frame at %d", off)
		}
		out = append(out, data[off:off+int64(h.size)])
		off += int64(h.size)
	}
	return out
}

// Damage in the middle of a stream costs the frames it touches and those
// whose main data was in them (they play as silence); the decoder finds
// the next frames and from a few frames on plays exactly as the undamaged
// stream.
func TestResyncAfterDamage(t *testing.T) {
	files := makeCorpus(t)
	for _, f := range []encoded{files[0], files[7], files[12]} {
		data := readFile(t, f.path)
		fr := frames(t, data)
		clean := decodeStream(t, joinFrames(fr))
		spf := 1152
		if f.rate < 32000 {
			spf = 576
		}
		at := len(fr) / 2
		cases := map[string][]byte{
			// Junk between frames, with a false sync in it.
			"junk": joinFrames(fr[:at], [][]byte{{0xff, 0xfb, 0x90, 0x00, 1, 2, 3, 0xff, 0x12, 4, 5, 6, 7, 8}}, fr[at:]),
			// An ID3v2 tag between frames, as concatenated streams have.
			"id3": joinFrames(fr[:at], [][]byte{id3Tag(300)}, fr[at:]),
			// A frame cut short.
			"cut": joinFrames(fr[:at], [][]byte{fr[at][:len(fr[at])/2]}, fr[at+1:]),
			// A frame whose header is broken.
			"header": joinFrames(fr[:at], [][]byte{append([]byte{0x12, 0x34}, fr[at][2:]...)}, fr[at+1:]),
		}
		for name, damaged := range cases {
			t.Run(f.name+"/"+name, func(t *testing.T) {
				got := decodeStream(t, damaged)
				nch := f.channels
				// Frames after the damage, shifted by those lost.
				lost := (len(clean) - len(got)) / nch / spf
				if lost < 0 || lost > 1 {
					t.Fatalf("%d values, clean %d: %d frames lost", len(got), len(clean), lost)
				}
				for i, v := range got {
					if v > 1.2 || v < -1.2 {
						t.Fatalf("value %d (frame %d) is %v: noise after the damage", i, i/nch/spf, v)
					}
				}
				from := (at + 6) * spf * nch
				for i := from; i < len(got); i++ {
					if got[i] != clean[i+lost*spf*nch] {
						t.Fatalf("value %d (frame %d) differs after the damage: %v, clean %v", i, i/nch/spf, got[i], clean[i+lost*spf*nch])
					}
				}
				// Files too: the same frames, and a length from the header.
				d, err := NewFile(bytes.NewReader(damaged), int64(len(damaged)))
				if err != nil {
					t.Fatal(err)
				}
				if fromFile := decodeAll(t, d); len(fromFile) != len(got) {
					t.Errorf("as a file %d values, as a stream %d", len(fromFile), len(got))
				}
			})
		}
	}
}

func id3Tag(size int) []byte {
	tag := make([]byte, 10+size)
	copy(tag, "ID3\x04\x00\x00")
	for i, s := 0, size; i < 4; i++ {
		tag[9-i] = byte(s & 0x7f)
		s >>= 7
	}
	for i := 10; i < len(tag); i++ {
		tag[i] = 0xff // sync bits everywhere inside
	}
	return tag
}

func joinFrames(parts ...[][]byte) []byte {
	var out []byte
	for _, p := range parts {
		for _, f := range p {
			out = append(out, f...)
		}
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decodeStream(t *testing.T, data []byte) []float32 {
	t.Helper()
	d, err := NewStream(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, d)
}

// A stream joined anywhere starts at the next frame and plays what the
// frames hold: silence while their main data lies before the join.
func TestStreamJoinedAnywhere(t *testing.T) {
	f := makeCorpus(t)[0]
	data := readFile(t, f.path)
	fr := frames(t, data)
	clean := decodeStream(t, joinFrames(fr))
	whole := joinFrames(fr)
	for _, cut := range []int{1, 100, len(whole) / 3, len(whole) - 3000} {
		got := decodeStream(t, whole[cut:])
		// The frames after the join, whole, end the clean decoding.
		tail := clean[len(clean)-len(got):]
		n := len(got)
		same := 0
		for i := n - 1; i >= 0 && got[i] == tail[i]; i-- {
			same++
		}
		if n == 0 || same < n-4*1152*2 {
			t.Errorf("joined at %d: %d values, only the last %d as the clean stream's", cut, n, same)
		}
	}
}

// In a file of constant bitrate a seek goes straight to its frame: the
// frames before it are not read (what an audiobook's resume hours in would
// otherwise cost on an SD card), and it lands where reading through does.
func TestSeekInCBRReadsOnlyNearTheTarget(t *testing.T) {
	g := &generator{r: rand.New(rand.NewPCG(8, 8)), s: genStream{version: 3, sri: 2, bri: 14, mode: modeStereo, sparse: true}, amp: 40}
	data := withInfoFrame(g.stream(1000)) // 1000 frames of 1440 bytes, 36 s
	counted := &countingReader{r: bytes.NewReader(data)}
	d, err := NewFile(counted, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !d.cbr {
		t.Fatal("the file's bitrate is not seen as constant")
	}
	whole := decodeAll(t, openFile2(t, data))
	for _, p := range []int64{d.Length() - 3000, d.Length() / 2, 200 * 1152} {
		d, _ := NewFile(counted, int64(len(data)))
		counted.n = 0
		if err := d.SeekSample(p); err != nil {
			t.Fatal(err)
		}
		if counted.n > int64(len(data))/4 {
			t.Errorf("seek to %d: read %d of %d bytes", p, counted.n, len(data))
		}
		buf := make([]float32, 2000)
		n, _ := d.Read(buf)
		for i := range n {
			if buf[i] != whole[2*p+int64(i)] {
				t.Fatalf("seek to %d: value %d is %v, reading through gives %v", p, i, buf[i], whole[2*p+int64(i)])
			}
		}
	}
}

func openFile2(t *testing.T, data []byte) *Decoder {
	t.Helper()
	d, err := NewFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type countingReader struct {
	r *bytes.Reader
	n int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}
