package decode

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// A live stream counts what the boundary clamped, as a file does: the
// seed MP3 with every global_gain raised by 36 (2^9, 54 dB) plays far
// beyond full scale, the player gets ±1, and the count shows it. (At 255,
// the largest, the MP3 decoder refuses its granules as beyond any legal
// level and plays silence.)
func TestLiveCountsWhatItClamped(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "seed", "tone.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	loud := raiseGain(t, data, 36)
	for name, c := range map[string]struct {
		data []byte
		over bool
	}{"as made": {data, false}, "global_gain +36": {loud, true}} {
		l, err := OpenLive(stream{bytes.NewReader(c.data)}, "audio/mpeg")
		if err != nil {
			t.Fatal(err)
		}
		buf := make([][2]float64, 1024)
		for {
			n, ok := l.Stream(buf)
			for _, s := range buf[:n] {
				if !(s[0] >= -1 && s[0] <= 1 && s[1] >= -1 && s[1] <= 1) {
					t.Fatalf("%s: sample %v reached the player", name, s)
				}
			}
			if !ok {
				break
			}
		}
		if got := l.clamped.over > 0 && l.clamped.peak > 1; got != c.over {
			t.Errorf("%s: clamps %+v", name, l.clamped)
		}
		t.Logf("%s: %+v", name, l.clamped)
		if err := checkRaw(l.clamped); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// raiseGain raises global_gain by by in every frame of the seed MP3
// (MPEG-2 Layer III, mono, no CRC: the side information is
// main_data_begin (8), private_bits (1), part2_3_length (12), big_values
// (9), global_gain (8)), to 255 at most.
func raiseGain(t *testing.T, data []byte, by int) []byte {
	t.Helper()
	out := bytes.Clone(data)
	lsfRates := [16]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0}
	off := 10 + (int(out[6])<<21 | int(out[7])<<14 | int(out[8])<<7 | int(out[9])) // after the ID3v2 tag
	frames := 0
	for off+8 <= len(out) && out[off] == 0xff && out[off+1]&0xfe == 0xf2 {
		if out[off+3]>>6 != 3 {
			t.Fatal("seed is not mono")
		}
		bitrate := lsfRates[out[off+2]>>4] * 1000
		size := 72*bitrate/16000 + int(out[off+2]>>1&1)
		// global_gain starts at bit 62 of the frame: bits 6..13 of the
		// 16 from byte 7.
		v := binary.BigEndian.Uint16(out[off+7:])
		gain := min(int(v>>2&0xff)+by, 255)
		binary.BigEndian.PutUint16(out[off+7:], v&^(0xff<<2)|uint16(gain)<<2)
		off += size
		frames++
	}
	if frames < 10 {
		t.Fatalf("found %d frames", frames)
	}
	return out
}
