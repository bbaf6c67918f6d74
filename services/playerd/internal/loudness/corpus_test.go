package loudness_test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/decode/aac/aactest"
	"github.com/storybox/storybox/services/playerd/internal/loudness"
)

// corpusCase is one file of the ffmpeg corpus.
type corpusCase struct {
	name     string
	rate     int
	channels int
	codec    []string // ffmpeg's output options
	ext      string
}

// corpus spans the formats the box plays, 16–96 kHz, mono and stereo.
var corpus = []corpusCase{
	{"mp3-44k-stereo", 44100, 2, []string{"-c:a", "libmp3lame", "-b:a", "128k"}, "mp3"},
	{"mp3-24k-mono", 24000, 1, []string{"-c:a", "libmp3lame", "-b:a", "48k"}, "mp3"},
	{"flac-48k-stereo", 48000, 2, []string{"-c:a", "flac"}, "flac"},
	{"flac-96k-stereo", 96000, 2, []string{"-c:a", "flac", "-sample_fmt", "s32"}, "flac"},
	{"flac-16k-mono", 16000, 1, []string{"-c:a", "flac"}, "flac"},
	{"aac-44k-stereo", 44100, 2, []string{"-c:a", "aac", "-b:a", "128k"}, "m4a"},
	{"aac-32k-mono", 32000, 1, []string{"-c:a", "aac", "-b:a", "48k"}, "aac"},
	{"opus-48k-stereo", 48000, 2, []string{"-c:a", "libopus", "-b:a", "96k"}, "opus"},
	{"opus-24k-mono", 24000, 1, []string{"-c:a", "libopus", "-b:a", "32k"}, "opus"},
}

// source is programme-like material: pink noise and a wandering tone,
// with a loud, a quiet and a silent stretch every 5 s (so both gates act),
// a different level per case.
func source(c corpusCase, i int) string {
	level := -10 - 3*float64(i)
	return fmt.Sprintf("anoisesrc=c=pink:r=%[1]d:a=0.5:d=8:seed=%[2]d,volume=%.1fdB[n];"+
		"sine=f=%[4]d:r=%[1]d:d=8,volume=0.2[s];[n][s]amix=inputs=2:normalize=0,"+
		"volume='if(lt(mod(t\\,5)\\,3)\\,1\\,if(lt(mod(t\\,5)\\,4)\\,0.15\\,0))':eval=frame",
		c.rate, i+1, level, 220+110*i)
}

var lastI = regexp.MustCompile(`lavfi\.r128\.I=(-?[0-9.]+)`)

// ffmpegIntegrated is ffmpeg's ebur128 integrated loudness of path, to
// three decimals (the filter's metadata; its summary prints one).
func ffmpegIntegrated(t *testing.T, ff, path string) float64 {
	out, err := exec.Command(ff, "-hide_banner", "-nostats", "-i", path,
		"-filter_complex", "ebur128=peak=true:metadata=1,ametadata=print:key=lavfi.r128.I", "-f", "null", "-").CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg ebur128 %s: %v\n%s", path, err, out)
	}
	m := lastI.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		t.Fatalf("no loudness in ffmpeg's output:\n%s", out)
	}
	v, err := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAgainstFFmpeg: through our decoders, the integrated loudness of
// every file of the corpus is within ±0.1 LU of ffmpeg's ebur128 filter
// on the same file (ffmpeg decoding it with its own decoders).
func TestAgainstFFmpeg(t *testing.T) {
	ff := aactest.FFmpeg(t)
	dir := t.TempDir()
	for i, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+"."+c.ext)
			args := append([]string{"-hide_banner", "-nostats", "-loglevel", "error", "-f", "lavfi", "-i", source(c, i),
				"-ac", strconv.Itoa(c.channels), "-ar", strconv.Itoa(c.rate)}, c.codec...)
			if out, err := exec.Command(ff, append(args, "-y", path)...).CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg: %v\n%s", err, out)
			}
			want := ffmpegIntegrated(t, ff, path)
			s, format, err := decode.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if format.NumChannels != c.channels {
				t.Fatalf("decoded %d channels, made %d", format.NumChannels, c.channels)
			}
			r, err := loudness.Measure(s, format, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := r.Integrated - want; math.Abs(d) > 0.1 {
				t.Errorf("integrated %.3f LUFS, ffmpeg %.3f LUFS", r.Integrated, want)
			}
			if testing.Verbose() {
				t.Logf("%s: ours %.3f LUFS, ffmpeg %.3f; LRA %.1f LU; true peak %.2f dBTP", c.name, r.Integrated, want, r.Range, r.TruePeak)
			}
		})
	}
	_ = os.RemoveAll(dir)
}
