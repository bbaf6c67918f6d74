package decode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gopxl/beep/v2"
	"github.com/gopxl/beep/v2/mp3"
)

func drainAll(t *testing.T, s beep.Streamer, chunk int) [][2]float64 {
	t.Helper()
	var out [][2]float64
	buf := make([][2]float64, chunk)
	for {
		n, ok := s.Stream(buf)
		if n < chunk && ok {
			// A short read means the end to the resampler: only at the end.
			if m, ok2 := s.Stream(buf[:1]); m != 0 || ok2 {
				t.Fatalf("a short read of %d frames before the end", n)
			}
			out = append(out, buf[:n]...)
			return out
		}
		out = append(out, buf[:n]...)
		if !ok {
			return out
		}
	}
}

// TestMP3MatchesBeep: the bulk decoder gives beep/mp3's samples bit for
// bit, whatever the read size, and after a seek.
func TestMP3MatchesBeep(t *testing.T) {
	path := filepath.Join("testdata", "tone.mp3")
	open := func(ours bool) beep.StreamSeekCloser {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var s beep.StreamSeekCloser
		if ours {
			s, _, err = decodeMP3(f)
		} else {
			s, _, err = mp3.Decode(f)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	for _, chunk := range []int{1, 7, 512, 1024, 100000} {
		want := drainAll(t, open(false), chunk)
		ours := open(true)
		got := drainAll(t, ours, chunk)
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("chunk %d: %d frames, beep %d", chunk, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("chunk %d: frame %d: %v, beep %v", chunk, i, got[i], want[i])
			}
		}
		if ours.Position() != len(got) {
			t.Fatalf("chunk %d: position %d after %d frames", chunk, ours.Position(), len(got))
		}
	}
	a, b := open(false), open(true)
	if a.Len() != b.Len() {
		t.Fatalf("Len %d, beep %d", b.Len(), a.Len())
	}
	for _, s := range []beep.StreamSeekCloser{a, b} {
		if err := s.Seek(a.Len() / 3); err != nil {
			t.Fatal(err)
		}
	}
	want, got := drainAll(t, a, 333), drainAll(t, b, 333)
	if len(got) != len(want) {
		t.Fatalf("after seek: %d frames, beep %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("after seek: frame %d: %v, beep %v", i, got[i], want[i])
		}
	}
	if err := b.Seek(b.Len() + 1); err == nil {
		t.Error("seek past the end accepted")
	}
}
