package flac

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// FuzzDecoder decodes arbitrary input with the CRC checks off, so mutations
// reach the subframe and residual decoding, and checks what the decoder
// produced (checkFrame) before anything downstream could clamp it.
func FuzzDecoder(f *testing.F) {
	for _, c := range crafted {
		// Small blocks: a seed decodes in microseconds.
		c.c.sizes = []int{64, 37, 192, 16}
		data, _ := c.c.encode()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return // without CRCs, every sync pattern is a frame to decode
		}
		d, err := NewFile(&memReader{data}, int64(len(data)))
		if err != nil {
			return
		}
		d.f.lax = true
		length, err := d.Length()
		if err != nil {
			t.Fatal(err)
		}
		play := func(frames int) {
			for range frames {
				before := d.Position()
				fr, err := d.Frame()
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := checkFrame(&d.info, fr, before, d.Position()); err != nil {
					t.Fatal(err)
				}
			}
		}
		play(200)
		for _, p := range []uint64{length / 2, 0, length} {
			if err := d.Seek(p); err != nil {
				t.Fatal(err)
			}
			if d.Position() != p {
				t.Fatalf("position %d after seeking to %d", d.Position(), p)
			}
			play(20)
		}
	})
}

// checkFrame is what a frame must be: a slice per channel, all as long, no
// longer than STREAMINFO's largest block, every sample within the stream's
// bits, the position advanced by the frame's length and never past the
// stream's total.
func checkFrame(in *StreamInfo, fr [][]int32, before, after uint64) error {
	if len(fr) != in.Channels {
		return fmt.Errorf("%d channels of %d", len(fr), in.Channels)
	}
	n := len(fr[0])
	for _, ch := range fr {
		if len(ch) != n {
			return fmt.Errorf("channels of %d and %d samples", n, len(ch))
		}
	}
	if n > in.MaxBlock {
		return fmt.Errorf("%d samples, blocks of at most %d", n, in.MaxBlock)
	}
	if after != before+uint64(n) {
		return fmt.Errorf("position %d after %d and %d samples", after, before, n)
	}
	if in.TotalSamples > 0 && after > in.TotalSamples {
		return fmt.Errorf("position %d past the total %d", after, in.TotalSamples)
	}
	lo, hi := -int64(1)<<(in.BitsPerSample-1), int64(1)<<(in.BitsPerSample-1)-1
	for c, ch := range fr {
		for i, v := range ch {
			if int64(v) < lo || int64(v) > hi {
				return fmt.Errorf("channel %d sample %d: %d beyond %d bits", c, i, v, in.BitsPerSample)
			}
		}
	}
	return nil
}

// TestCheckFrame: each of checkFrame's checks fails on what it is for.
func TestCheckFrame(t *testing.T) {
	in := &StreamInfo{MaxBlock: 4, Channels: 2, BitsPerSample: 8, TotalSamples: 10}
	for _, c := range []struct {
		name          string
		fr            [][]int32
		before, after uint64
		bad           bool
	}{
		{"good", [][]int32{{1, -128, 127}, {0, 0, 0}}, 0, 3, false},
		{"channels", [][]int32{{1, 2, 3}}, 0, 3, true},
		{"lengths", [][]int32{{1, 2, 3}, {1, 2}}, 0, 3, true},
		{"block", [][]int32{{1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}}, 0, 5, true},
		{"position", [][]int32{{1, 2, 3}, {1, 2, 3}}, 0, 4, true},
		{"total", [][]int32{{1, 2, 3}, {1, 2, 3}}, 8, 11, true},
		{"high", [][]int32{{1, 128, 3}, {1, 2, 3}}, 0, 3, true},
		{"low", [][]int32{{1, 2, 3}, {1, -129, 3}}, 0, 3, true},
	} {
		if err := checkFrame(in, c.fr, c.before, c.after); (err != nil) != c.bad {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
