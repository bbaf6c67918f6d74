package aac

import (
	"testing"
)

// packBits packs fields MSB first into bytes, padded with zeros.
func packBits(fields ...[2]uint32) []byte {
	var out []byte
	var acc uint64
	n := 0
	for _, f := range fields {
		acc = acc<<f[1] | uint64(f[0])
		n += int(f[1])
		for n >= 8 {
			out = append(out, byte(acc>>(n-8)))
			n -= 8
		}
	}
	if n > 0 {
		out = append(out, byte(acc<<(8-n)))
	}
	return out
}

// HE-AAC's signalling in an AudioSpecificConfig: explicit (object type 5
// or 29 first) and backward compatible (a sync extension after the LC
// config). Each plays its AAC-LC core at the core's rate.
func TestHEAACConfigs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		asc     []byte
		rate    int
		sbr, ps bool
	}{
		{"LC 44.1 kHz stereo", packBits([2]uint32{2, 5}, [2]uint32{4, 4}, [2]uint32{2, 4}, [2]uint32{0, 3}), 44100, false, false},
		{"HE-AAC explicit", packBits([2]uint32{5, 5}, [2]uint32{6, 4}, [2]uint32{2, 4}, [2]uint32{3, 4}, [2]uint32{2, 5}, [2]uint32{0, 3}), 24000, true, false},
		{"HE-AACv2 explicit", packBits([2]uint32{29, 5}, [2]uint32{7, 4}, [2]uint32{1, 4}, [2]uint32{4, 4}, [2]uint32{2, 5}, [2]uint32{0, 3}), 22050, true, true},
		{"HE-AACv2 backward compatible", packBits([2]uint32{2, 5}, [2]uint32{6, 4}, [2]uint32{2, 4}, [2]uint32{0, 3},
			[2]uint32{0x2b7, 11}, [2]uint32{5, 5}, [2]uint32{1, 1}, [2]uint32{3, 4}, [2]uint32{0x548, 11}, [2]uint32{1, 1}), 24000, true, true},
	} {
		c, err := ParseASC(tc.asc)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if c.ObjectType != aotLC || c.SampleRate != tc.rate || c.SBR != tc.sbr || c.PS != tc.ps {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
	if _, err := ParseASC(packBits([2]uint32{1, 5}, [2]uint32{4, 4}, [2]uint32{2, 4}, [2]uint32{0, 3})); err == nil {
		t.Error("AAC Main accepted")
	}
	if _, err := ParseASC(packBits([2]uint32{2, 5}, [2]uint32{4, 4}, [2]uint32{2, 4}, [2]uint32{1, 1}, [2]uint32{0, 2})); err == nil {
		t.Error("960-sample frames accepted")
	}
}

// An ADTS HE-AAC stream says nothing of SBR in its header (implicit
// signalling): the decoder finds SBR data in a frame's fill element, skips
// it, and reports it.
func TestSBRInFillElement(t *testing.T) {
	data := readSeed(t)
	frames := splitADTS(t, data)
	h, _ := ParseADTS(data)
	d, err := NewDecoder(h.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames[:3] {
		if _, err := d.Decode(f); err != nil {
			t.Fatal(err)
		}
	}
	plain, err := d.Decode(frames[3])
	if err != nil {
		t.Fatal(err)
	}
	want := append([]float32(nil), plain[0]...)
	if d.SBR() {
		t.Fatal("SBR before any SBR data")
	}
	// The frame again, with a fill element of one byte of SBR data
	// (extension type 13) before its END.
	end := d.endBit
	var b bitReader
	b.reset(frames[3])
	var fields [][2]uint32
	for k := 0; k < end; k++ {
		fields = append(fields, [2]uint32{b.read(1), 1})
	}
	fields = append(fields, [2]uint32{idFIL, 3}, [2]uint32{1, 4}, [2]uint32{13<<4 | 5, 8}, [2]uint32{idEND, 3})
	d2, _ := NewDecoder(h.Config)
	for _, f := range frames[:3] {
		if _, err := d2.Decode(f); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d2.Decode(packBits(fields...))
	if err != nil {
		t.Fatal(err)
	}
	if !d2.SBR() {
		t.Error("SBR data not noticed")
	}
	for i := range want {
		if got[0][i] != want[i] {
			t.Fatalf("sample %d: %v with the fill element, %v without", i, got[0][i], want[i])
		}
	}
}
