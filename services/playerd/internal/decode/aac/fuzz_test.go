package aac

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecoder feeds the decoder raw frames under each kind of
// configuration: mono, stereo, more channels (config 3), and one defined
// by the stream (config 0). An error is a correct answer; a panic, or a
// sample that is not a finite number, is a bug. The seeds are the frames
// of a real ADTS file.
func FuzzDecoder(f *testing.F) {
	data := readSeed(f)
	for off := 0; off+7 <= len(data); {
		h, err := ParseADTS(data[off:])
		if err != nil || off+h.FrameLength > len(data) {
			break
		}
		f.Add(uint8(2), uint8(11), data[off+h.HeaderLength:off+h.FrameLength])
		off += h.FrameLength
	}
	f.Fuzz(func(t *testing.T, channels, rate uint8, frame []byte) {
		c := Config{ObjectType: aotLC, RateIndex: int(rate % 13), Channels: int(channels % 4)}
		c.SampleRate = sampleRates[c.RateIndex]
		d, err := NewDecoder(c)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			pcm, err := d.Decode(frame)
			if err != nil {
				continue
			}
			for _, ch := range pcm {
				for _, v := range ch {
					if v != v || v > 1e9 || v < -1e9 {
						t.Fatalf("sample %v", v)
					}
				}
			}
		}
		_, _ = ParseASC(frame)
		_, _ = ParseADTS(frame)
	})
}

func readSeed(tb testing.TB) []byte {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "seed", "tone.aac"))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
