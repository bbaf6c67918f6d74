package decode

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/decode/aac"
	"github.com/storybox/storybox/services/playerd/internal/decode/aac/aactest"
)

func TestAACFiles(t *testing.T) {
	for _, name := range []string{"tone.aac", "tone.m4a"} {
		t.Run(name, func(t *testing.T) {
			s, format, err := Open(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			secs := float64(s.Len()) / float64(format.SampleRate)
			// ADTS keeps the encoder's delay and padding (1024 samples
			// and the last frame's rest); M4A's edit list trims them.
			want, tol := 2.0, 0.001
			if name == "tone.aac" {
				want, tol = 2.0+1024.0/44100, 1024.0/44100
			}
			if math.Abs(secs-want) > tol {
				t.Errorf("Len = %.4f s, want %.4f", secs, want)
			}
			frames := readAll(t, s)
			if len(frames) != s.Len() {
				t.Errorf("streamed %d frames of %d", len(frames), s.Len())
			}
			mid := frames[len(frames)/4 : 3*len(frames)/4]
			if l, r := crossings(mid, 0, format.SampleRate), crossings(mid, 1, format.SampleRate); math.Abs(l-440) > 5 || math.Abs(r-660) > 5 {
				t.Errorf("pitch %.0f/%.0f Hz, want 440/660", l, r)
			}
		})
	}
}

// TestM4AAccuracy decodes the corpus as M4A through Open, edit list and
// all, against ffmpeg's decoding of the same files: the same samples from
// the same first one to the same last one.
func TestM4AAccuracy(t *testing.T) {
	dir := t.TempDir()
	var table strings.Builder
	for _, c := range aactest.Corpus {
		path, ref := aactest.Make(t, dir, c, ".m4a")
		s, format, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		frames := readAll(t, s)
		s.Close()
		if int(format.SampleRate) != c.Rate || format.NumChannels != c.Channels {
			t.Errorf("%s: format %+v", c.Name, format)
		}
		got := make([]float32, 0, len(frames)*c.Channels)
		for _, f := range frames {
			for ch := range c.Channels {
				got = append(got, float32(f[ch]))
			}
		}
		// ffmpeg 5.1 applies the edit list's start (the encoder delay)
		// but not its end: it keeps the last frame's padding, less than a
		// frame, which is not compared.
		if len(got) > len(ref) || len(ref)-len(got) >= 1024*c.Channels {
			t.Errorf("%s: %d samples, ffmpeg %d", c.Name, len(got)/c.Channels, len(ref)/c.Channels)
			continue
		}
		ref = ref[:len(got)]
		// The boundary keeps samples within full scale (sanitize); the
		// clicks overshoot it in places.
		for i, v := range ref {
			ref[i] = max(-1, min(1, v))
		}
		r := aactest.Compare(got, ref)
		crit := r.Criterion()
		if crit == "" {
			// Noise substitution, which ffmpeg's encoder uses by default,
			// is random by design and ours is not ffmpeg's: judged by
			// band energies, as the ADTS test does, and the samples must
			// still line up with ffmpeg's (the edit list is applied alike).
			dev := aactest.BandDeviation(got, ref, c.Channels, c.Rate)
			lag := bestLag(got, ref, c.Channels, 64)
			if dev <= 0.5 && lag == 0 {
				crit = fmt.Sprintf("bands within %.2f dB, aligned", dev)
			} else if lag != 0 {
				t.Errorf("%s: %d samples off ffmpeg's", c.Name, lag)
			}
		}
		if crit == "" {
			t.Errorf("%s: RMS %.3g, max %.3g, SNR %.1f dB: meets no criterion", c.Name, r.RMS, r.Max, r.SNR)
		}
		fmt.Fprintf(&table, "%-26s %10.3g %10.3g %8.1f  %s\n", c.Name+".m4a", r.RMS, r.Max, r.SNR, crit)
	}
	t.Logf("M4A through Open against ffmpeg:\n%s", table.String())
}

// bestLag is the shift of got against ref, in samples of each channel
// within ±most, at which the two correlate best.
func bestLag(got, ref []float32, channels, most int) int {
	n := min(len(got), len(ref), 1<<17) / channels
	best, bestSum := 0, math.Inf(-1)
	for lag := -most; lag <= most; lag++ {
		var sum float64
		for i := max(0, -lag); i < n && i+lag < n; i++ {
			for c := range channels {
				sum += float64(got[i*channels+c]) * float64(ref[(i+lag)*channels+c])
			}
		}
		if sum > bestSum {
			best, bestSum = lag, sum
		}
	}
	return best
}

// TestAACSeek: a seek lands on the same samples as decoding up to there.
func TestAACSeek(t *testing.T) {
	for _, name := range []string{"tone.aac", "tone.m4a"} {
		path := filepath.Join("testdata", name)
		s, _, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		all := readAll(t, s)
		for _, p := range []int{0, 1, 1023, 1024, 5000, 30000, len(all) - 10} {
			if err := s.Seek(p); err != nil {
				t.Fatal(err)
			}
			if s.Position() != p {
				t.Errorf("%s: Position %d after Seek(%d)", name, s.Position(), p)
			}
			buf := make([][2]float64, 10)
			n, _ := s.Stream(buf)
			for i := range n {
				for c := range 2 {
					if math.Abs(buf[i][c]-all[p+i][c]) > 1e-6 {
						t.Fatalf("%s: after Seek(%d) sample %d is %v, in order %v", name, p, i, buf[i], all[p+i])
					}
				}
			}
		}
		s.Close()
	}
}

// TestChapters: an M4B's chapters are listed, and a chapter's path opens a
// stream of exactly that chapter's samples.
func TestChapters(t *testing.T) {
	path := filepath.Join("testdata", "seed", "tone.m4b")
	info, err := ReadInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Chapters) != 3 || info.Chapters[1].Title != "Kapitel 2" || info.Chapters[1].Start != 0.1 || info.Chapters[1].End != 0.2 {
		t.Fatalf("chapters %+v", info.Chapters)
	}
	if info.Tags.Title != "Ton A" || info.Tags.Picture == nil || info.Tags.Picture.MIMEType != "image/png" {
		t.Errorf("tags %+v", info.Tags)
	}
	whole, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	all := readAll(t, whole)
	whole.Close()
	for n, c := range info.Chapters {
		s, format, err := Open(ChapterPath(path, n+1))
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, s)
		s.Close()
		from, to := int(c.Start*float64(format.SampleRate)+0.5), int(c.End*float64(format.SampleRate)+0.5)
		if len(got) != to-from {
			t.Fatalf("chapter %d: %d samples, want %d", n+1, len(got), to-from)
		}
		for i := range got {
			if math.Abs(got[i][0]-all[from+i][0]) > 1e-6 {
				t.Fatalf("chapter %d sample %d: %v, in the whole file %v", n+1, i, got[i], all[from+i])
			}
		}
	}
	if _, _, err := Open(ChapterPath(path, 4)); err == nil {
		t.Error("a fourth chapter opened")
	}
}

// An HE-AAC ADTS file is reported by the scan as playing its core.
func TestADTSHEAACNotice(t *testing.T) {
	data := fixture(t, "tone.aac")
	var he []byte
	for off := 0; off+7 <= len(data); {
		h, err := aac.ParseADTS(data[off:])
		if err != nil {
			t.Fatal(err)
		}
		raw := withSBRFill(data[off+h.HeaderLength : off+h.FrameLength])
		he = append(append(he, adtsHeader(data[off:off+7], len(raw))...), raw...)
		off += h.FrameLength
	}
	dir := t.TempDir()
	for name, file := range map[string][]byte{"he.aac": he, "lc.aac": data} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		info, err := ReadInfo(path)
		if err != nil {
			t.Fatal(err)
		}
		if he := strings.Contains(info.Notice, "HE-AAC: plays its AAC-LC core at 44100 Hz"); he != (name == "he.aac") {
			t.Errorf("%s: notice %q", name, info.Notice)
		}
	}
}
