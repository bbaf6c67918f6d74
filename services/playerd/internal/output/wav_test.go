package output

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// A WAV file has one rate: the opener takes the rate asked for until audio
// was written, then keeps the file's rate and continues the file.
func TestWAVOpenerKeepsOneRatePerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.wav")
	open := WAVOpener(path, false)
	step := func(rate, frames, wantRate int) {
		t.Helper()
		s, err := open(rate)
		if err != nil {
			t.Fatal(err)
		}
		if s.Rate() != wantRate {
			t.Errorf("opened at %d: Rate %d, want %d", rate, s.Rate(), wantRate)
		}
		buf := make([][2]float64, frames)
		for i := range buf {
			buf[i] = [2]float64{0.25, -0.25}
		}
		if err := s.Write(buf); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	step(48000, 0, 48000)   // opened, nothing written
	step(44100, 100, 44100) // so the file takes the next rate
	step(48000, 50, 44100)  // and keeps it
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := binary.LittleEndian.Uint32(b[24:]); r != 44100 {
		t.Errorf("header rate %d", r)
	}
	if n := binary.LittleEndian.Uint32(b[40:]); n != 150*4 || len(b) != 44+150*4 {
		t.Errorf("data size %d in the header, %d bytes in the file; want 150 frames", n, len(b)-44)
	}
	for i := 44; i < len(b); i += 4 {
		if l, r := int16(binary.LittleEndian.Uint16(b[i:])), int16(binary.LittleEndian.Uint16(b[i+2:])); l != ToS16(0.25) || r != ToS16(-0.25) {
			t.Fatalf("frame %d: %d %d", (i-44)/4, l, r)
		}
	}
}

func TestRateFor(t *testing.T) {
	for in, want := range map[int]int{44100: 44100, 48000: 48000, 46000: 46000, 88200: 44100, 96000: 48000,
		176400: 44100, 192000: 48000, 32000: DefaultRate, 22050: DefaultRate, 8000: DefaultRate, 50000: DefaultRate} {
		if got := RateFor(in); got != want {
			t.Errorf("RateFor(%d) = %d, want %d", in, got, want)
		}
	}
}

// The decoders scale n-bit samples by 2^-(n-1); the conversions undo that
// exactly, so a file played at full volume comes out as it is.
func TestConversionsGiveSamplesBack(t *testing.T) {
	for x := math.MinInt16; x <= math.MaxInt16; x++ {
		v := float64(x) / (1 << 15)
		if ToS16(v) != int16(x) || ToS32(v) != int32(x)<<16 {
			t.Fatalf("16-bit %d: ToS16 %d, ToS32 %d", x, ToS16(v), ToS32(v))
		}
	}
	for _, x := range []int32{-1 << 23, -1, 0, 1, 12345, 1<<23 - 1} {
		if v := float64(x) / (1 << 23); ToS32(v) != x<<8 {
			t.Errorf("24-bit %d: ToS32 %d", x, ToS32(v))
		}
	}
}
