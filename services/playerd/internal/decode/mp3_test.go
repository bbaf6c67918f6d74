package decode

import (
	"path/filepath"
	"testing"

	"github.com/gopxl/beep/v2"
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

// The MP3 stream gives the same samples whatever the read size, keeps its
// position, and after a seek gives what playing through gives; a file
// with a LAME header is exactly as long as what was encoded (2 s).
func TestMP3Stream(t *testing.T) {
	path := filepath.Join("testdata", "tone.mp3")
	open := func() beep.StreamSeekCloser {
		s, format, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if format.SampleRate != 44100 || format.NumChannels != 2 {
			t.Fatalf("format %+v", format)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	want := drainAll(t, open(), 4096)
	if len(want) != 88200 || open().Len() != 88200 {
		t.Fatalf("%d samples, Len %d; want 88200 (2 s)", len(want), open().Len())
	}
	for _, chunk := range []int{1, 7, 512, 1153, 100000} {
		s := open()
		got := drainAll(t, s, chunk)
		if len(got) != len(want) {
			t.Fatalf("chunk %d: %d samples, want %d", chunk, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("chunk %d: sample %d: %v, want %v", chunk, i, got[i], want[i])
			}
		}
		if s.Position() != len(got) {
			t.Fatalf("chunk %d: position %d after %d samples", chunk, s.Position(), len(got))
		}
	}
	s := open()
	for _, p := range []int{s.Len() / 3, 0, 1, s.Len() - 5} {
		if err := s.Seek(p); err != nil {
			t.Fatal(err)
		}
		got := drainAll(t, s, 333)
		if len(got) != len(want)-p {
			t.Fatalf("after seek to %d: %d samples, want %d", p, len(got), len(want)-p)
		}
		for i := range got {
			if got[i] != want[p+i] {
				t.Fatalf("after seek to %d: sample %d: %v, want %v", p, i, got[i], want[p+i])
			}
		}
	}
	if err := s.Seek(s.Len() + 1); err == nil {
		t.Error("seek past the end accepted")
	}
}
