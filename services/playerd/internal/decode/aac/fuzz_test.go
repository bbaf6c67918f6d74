package aac

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecoder feeds the decoder raw frames under each kind of
// configuration: mono, stereo, more channels (config 3), and one defined
// by the stream (config 0). An error is a correct answer; a panic, or a
// sample checkPCM refuses, is a bug. The seeds are the frames
// of a real ADTS file and frames written by hand at levels no signal has.
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
	// They decode as silence (TestLoudFramesAreSilence).
	f.Add(uint8(1), uint8(craftRate), sce(craftCh{gain: 255, cb: bandsOf(8, escHCB), val: 8191}))
	f.Add(uint8(1), uint8(craftRate), sce(craftCh{gain: 168, cb: append([]int{escHCB}, bandsOf(41, zeroHCB)...), val: 100, tns: true}))
	f.Add(uint8(2), uint8(craftRate), cpe(craftCh{gain: 168, cb: bandsOf(8, escHCB), val: 100}, craftCh{gain: 168, cb: bandsOf(8, intensityHCB), isPos: -155}))
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
			if err := checkPCM(pcm); err != nil {
				t.Fatal(err)
			}
		}
		_, _ = ParseASC(frame)
		_, _ = ParseADTS(frame)
	})
}

// pcmBound is the largest magnitude the decoder may output. Beyond full
// scale is what loud or damaged frames give (the player's guard clamps
// it); 1e9, 180 dB above it, no encoder's stream comes near: beyond it, or
// a value that is no finite number, the decoder computes garbage (an
// unbounded noise energy gave 3e9).
const pcmBound = 1e9

// checkPCM reports output the decoder must never produce.
func checkPCM(pcm [][]float32) error {
	for c, ch := range pcm {
		for i, v := range ch {
			if !(v >= -pcmBound && v <= pcmBound) {
				return fmt.Errorf("channel %d sample %d is %g", c, i, v)
			}
		}
	}
	return nil
}

func readSeed(tb testing.TB) []byte {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "seed", "tone.aac"))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
