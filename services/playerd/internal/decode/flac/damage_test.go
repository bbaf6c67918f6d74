package flac

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// frameOffsets lists where each frame of a clean file starts, and its
// first sample.
func frameOffsets(t *testing.T, path string) (offs []int64, firsts []int) {
	t.Helper()
	d := openFile(t, path)
	for {
		off, pos := d.off, d.pos
		_, err := d.Frame()
		if errors.Is(err, io.EOF) {
			return offs, firsts
		}
		if err != nil {
			t.Fatal(err)
		}
		offs, firsts = append(offs, off), append(firsts, int(pos))
	}
}

// TestDamage corrupts frames of a file (their body: a CRC-16 mismatch; their
// header: a CRC-8 mismatch; two frames in a row; the last frame) and checks
// that each damaged frame comes out as silence of its length, every other
// sample as flac -d made it, and the length unchanged.
func TestDamage(t *testing.T) {
	requireFLAC(t)
	s := signal{44100, 2, 16, 60000, "music"}
	file, ref := encode(t, s, "-5", "-b", "1152", "-S", "-")
	clean, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	offs, firsts := frameOffsets(t, file)
	nf := len(offs)
	frameLen := func(k int) int {
		if k+1 < nf {
			return firsts[k+1] - firsts[k]
		}
		return s.frames - firsts[k]
	}
	cases := []struct {
		name   string
		frames []int
		at     func(k int) int64 // the byte to corrupt in frame k
	}{
		{"body", []int{10}, func(k int) int64 { return offs[k] + 40 }},
		{"crc16", []int{11}, func(k int) int64 { return offs[k+1] - 1 }},
		{"header-crc8", []int{12}, func(k int) int64 { return offs[k] + 2 }},
		{"sync", []int{13}, func(k int) int64 { return offs[k] }},
		{"two-in-a-row", []int{20, 21}, func(k int) int64 { return offs[k] + 3 }},
		{"first", []int{0}, func(k int) int64 { return offs[k] + 30 }},
		{"last", []int{nf - 1}, func(k int) int64 { return offs[k] + 20 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := bytes.Clone(clean)
			want := append([]int32(nil), ref...)
			for _, k := range c.frames {
				data[c.at(k)] ^= 0x5A
				clear(want[firsts[k]*s.channels : (firsts[k]+frameLen(k))*s.channels])
			}
			path := filepath.Join(t.TempDir(), "x.flac")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			d := openFile(t, path)
			got, _, err := decodeAll(d)
			if err != nil {
				t.Fatal(err)
			}
			if !sameSamples(got, want) {
				t.Fatalf("%s", firstDiff(got, want))
			}
			// Frames lost together are one stretch of damage.
			runs := 0
			for i, k := range c.frames {
				if i == 0 || c.frames[i-1] != k-1 {
					runs++
				}
			}
			if d.Damaged() != runs {
				t.Fatalf("%d stretches damaged, want %d", d.Damaged(), runs)
			}
		})
	}
}
