package mp3

import "testing"

// Frame lengths, padding included: 144·bitrate/rate bytes for MPEG-1, 72
// for MPEG-2 and 2.5, plus the padding byte (go-mp3 halved the padding of
// MPEG-2 frames and lost it, a byte short).
func TestFrameLength(t *testing.T) {
	for _, c := range []struct {
		header uint32
		size   int
		rate   int
	}{
		{0xfffb9000, 417, 44100}, // MPEG-1, 128 kbit/s, 44.1 kHz
		{0xfffb9200, 418, 44100}, // padded
		{0xfff34200, 105, 22050}, // MPEG-2, 32 kbit/s, 22.05 kHz, padded: 104.49 → 104 + 1
		{0xfff34000, 104, 22050},
		{0xffe31a00, 73, 8000}, // MPEG-2.5, 8 kbit/s, 8 kHz, padded
		{0xfffbe000, 1044, 44100},
	} {
		h, ok := parseHeader(c.header)
		if !ok || h.size != c.size || h.rate() != c.rate {
			t.Errorf("%08x: ok %v, %d bytes at %d Hz; want %d at %d", c.header, ok, h.size, h.rate(), c.size, c.rate)
		}
	}
	for _, bad := range []uint32{
		0xfffd9000, // Layer II
		0xffeb9000, // reserved version
		0xfffb0000, // free format
		0xfffbf000, // bitrate index 15
		0xfffb9c00, // sampling frequency 3
		0xfffb9002, // emphasis 2
		0x7ffb9000, // no sync
	} {
		if _, ok := parseHeader(bad); ok {
			t.Errorf("%08x accepted", bad)
		}
	}
}
