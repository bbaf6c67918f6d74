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
			for _, p := range targets {
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
