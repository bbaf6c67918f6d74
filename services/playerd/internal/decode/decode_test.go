package decode

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopxl/beep/v2"
)

// crossings counts rising zero crossings per second in one channel, a cheap
// pitch estimate that shows the decoder kept channel order and sample rate.
func crossings(frames [][2]float64, ch int, rate beep.SampleRate) float64 {
	n := 0
	for i := 1; i < len(frames); i++ {
		if frames[i-1][ch] < 0 && frames[i][ch] >= 0 {
			n++
		}
	}
	return float64(n) / (float64(len(frames)) / float64(rate))
}

func readAll(t *testing.T, s beep.Streamer) [][2]float64 {
	t.Helper()
	var out [][2]float64
	buf := make([][2]float64, 1000)
	for {
		n, ok := s.Stream(buf)
		out = append(out, buf[:n]...)
		if !ok {
			break
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tolerance is the allowed length error. MP3 is exact since its decoder
// trims the encoder delay and padding of LAME's header.
func tolerance(string) float64 { return 0.005 }

func TestDecodeEveryFormat(t *testing.T) {
	for _, name := range []string{"tone48k.wav", "tone.flac", "tone.mp3", "tone.ogg", "tone.opus"} {
		t.Run(name, func(t *testing.T) {
			s, format, err := Open(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			secs := float64(s.Len()) / float64(format.SampleRate)
			if math.Abs(secs-2) > tolerance(name) {
				t.Errorf("Len = %.3f s, want 2 s", secs)
			}
			frames := readAll(t, s)
			if got := float64(len(frames)) / float64(format.SampleRate); math.Abs(got-2) > tolerance(name) {
				t.Errorf("decoded %.3f s, want 2 s", got)
			}
			mid := frames[len(frames)/4 : 3*len(frames)/4]
			if l := crossings(mid, 0, format.SampleRate); math.Abs(l-440) > 10 {
				t.Errorf("left pitch %.0f Hz, want 440", l)
			}
			if r := crossings(mid, 1, format.SampleRate); math.Abs(r-660) > 10 {
				t.Errorf("right pitch %.0f Hz, want 660", r)
			}
		})
	}
}

func TestSeek(t *testing.T) {
	for _, name := range []string{"tone48k.wav", "tone.flac", "tone.mp3", "tone.ogg", "tone.opus"} {
		t.Run(name, func(t *testing.T) {
			s, format, err := Open(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			target := format.SampleRate.N(1500e6) // 1.5 s
			if err := s.Seek(target); err != nil {
				t.Fatal(err)
			}
			if s.Position() != target {
				t.Errorf("Position after Seek = %d, want %d", s.Position(), target)
			}
			rest := readAll(t, s)
			if got := float64(len(rest)) / float64(format.SampleRate); math.Abs(got-0.5) > tolerance(name) {
				t.Errorf("after seek to 1.5 s, %.3f s remain, want 0.5", got)
			}
			if l := crossings(rest[:len(rest)/2], 0, format.SampleRate); math.Abs(l-440) > 25 {
				t.Errorf("left pitch after seek %.0f Hz, want 440", l)
			}
		})
	}
}

func TestRefusesWhatIsNotAudio(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"text.mp3":      "this is not audio at all",
		"empty.flac":    "",
		"truncated.ogg": "OggS\x00\x02",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if s, _, err := Open(p); err == nil {
			s.Close()
			t.Errorf("%s: Open succeeded, want an error", name)
		}
	}
	if _, _, err := Open(filepath.Join(dir, "missing.mp3")); err == nil {
		t.Error("missing file: want an error")
	}
}

func TestIsAudio(t *testing.T) {
	for name, want := range map[string]bool{"a.MP3": true, "b.opus": true, "c.jpg": false, "d": false, "e.m4a": true, "f.M4B": true, "g.aac": true, "h.wma": false} {
		if IsAudio(name) != want {
			t.Errorf("IsAudio(%q) = %v", name, !want)
		}
	}
}
