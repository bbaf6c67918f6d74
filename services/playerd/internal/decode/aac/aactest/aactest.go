// Package aactest makes AAC test files with Debian's ffmpeg (its native AAC
// encoder) and judges a decoder's output against ffmpeg's own decoding of
// them. ffmpeg is a test oracle only: it never ships.
package aactest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// FFmpeg returns the path of ffmpeg. Without it the test is skipped, except
// under CI (CI set) or where the Makefile installed it
// (STORYBOX_REQUIRE_FFMPEG set): there a missing ffmpeg fails.
func FFmpeg(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("STORYBOX_REQUIRE_FFMPEG") != "" {
			t.Fatal("ffmpeg is missing; make deps installs it (Debian package ffmpeg)")
		}
		t.Skip("ffmpeg is missing (Debian package ffmpeg; make deps installs it)")
	}
	return p
}

// Case is one file of the corpus: a synthetic source, how it is encoded,
// and which coding tools it is meant to draw from the encoder.
type Case struct {
	Name     string
	Source   string // an ffmpeg lavfi filter graph with one output
	Rate     int
	Channels int
	Bitrate  string   // e.g. 128k
	Encoder  []string // further options of ffmpeg's aac encoder
	Seconds  float64
	// PNS marks a case whose encoding uses perceptual noise
	// substitution: its noise is random by design, so it is judged by
	// band energies instead of sample by sample.
	PNS bool
}

// Corpus spans 8–48 kHz, mono and stereo, 32–256 kbit/s, and the coding
// tools: short windows (transients), M/S, intensity stereo, PNS, TNS.
var Corpus = []Case{
	{Name: "music-44k-stereo-128k", Source: "sine=f=440:r=44100,volume=0.3[a];anoisesrc=c=pink:r=44100:a=0.15[b];[a][b]join=inputs=2:channel_layout=stereo", Rate: 44100, Channels: 2, Bitrate: "128k", Seconds: 4},
	{Name: "clicks-48k-stereo-192k", Source: clicks(48000), Rate: 48000, Channels: 2, Bitrate: "192k", Seconds: 4},
	{Name: "voice-16k-mono-32k", Source: voice(16000), Rate: 16000, Channels: 1, Bitrate: "32k", Seconds: 4},
	{Name: "voice-8k-mono-32k", Source: voice(8000), Rate: 8000, Channels: 1, Bitrate: "32k", Seconds: 4},
	{Name: "ms-22k-stereo-64k", Source: "sine=f=330:r=22050,volume=0.4,asplit[a][b];[b]volume=0.9[c];[a][c]join=inputs=2:channel_layout=stereo", Rate: 22050, Channels: 2, Bitrate: "64k", Encoder: []string{"-aac_ms", "1"}, Seconds: 4},
	{Name: "chirp-32k-stereo-96k", Source: "aevalsrc=0.4*sin(2*PI*(200+800*t)*t)|0.4*sin(2*PI*(300+600*t)*t):s=32000", Rate: 32000, Channels: 2, Bitrate: "96k", Seconds: 4},
	{Name: "noise-48k-stereo-256k", Source: "anoisesrc=c=white:r=48000:a=0.3,asplit[a][b];[b]adelay=3[c];[a][c]join=inputs=2:channel_layout=stereo", Rate: 48000, Channels: 2, Bitrate: "256k", Seconds: 3},
	{Name: "is-44k-stereo-64k", Source: "anoisesrc=c=pink:r=44100:a=0.3,asplit[a][b];[b]volume=0.5[c];[a][c]join=inputs=2:channel_layout=stereo", Rate: 44100, Channels: 2, Bitrate: "64k", Encoder: []string{"-aac_is", "1", "-aac_ms", "0", "-aac_pns", "0"}, Seconds: 4},
	{Name: "tns-24k-stereo-48k", Source: clicks(24000), Rate: 24000, Channels: 2, Bitrate: "48k", Encoder: []string{"-aac_tns", "1"}, Seconds: 4},
	{Name: "tns-44k-mono-96k", Source: voice(44100), Rate: 44100, Channels: 1, Bitrate: "96k", Encoder: []string{"-aac_tns", "1"}, Seconds: 4},
	{Name: "pns-44k-stereo-48k", Source: "anoisesrc=c=pink:r=44100:a=0.3,asplit[a][b];[b]volume=0.8[c];[a][c]join=inputs=2:channel_layout=stereo", Rate: 44100, Channels: 2, Bitrate: "48k", Encoder: []string{"-aac_pns", "1"}, Seconds: 4, PNS: true},
	{Name: "pns-22k-mono-32k", Source: "anoisesrc=c=white:r=22050:a=0.3", Rate: 22050, Channels: 1, Bitrate: "32k", Encoder: []string{"-aac_pns", "1"}, Seconds: 4, PNS: true},
	{Name: "tone-11k-mono-32k", Source: "sine=f=1000:r=11025,volume=0.5", Rate: 11025, Channels: 1, Bitrate: "32k", Seconds: 3},
}

// clicks are sharp attacks over a tone: the encoder switches to short
// windows for them.
func clicks(rate int) string {
	return fmt.Sprintf("aevalsrc=0.2*sin(2*PI*523*t)+0.7*lt(mod(t\\,0.25)\\,0.002)*sin(2*PI*3000*t)|0.2*sin(2*PI*659*t)+0.7*lt(mod(t+0.1\\,0.3)\\,0.002):s=%d", rate)
}

// voice is a vowel-like harmonic series with syllable-rate bursts.
func voice(rate int) string {
	return fmt.Sprintf("aevalsrc=(0.3*sin(2*PI*140*t)+0.2*sin(2*PI*280*t)+0.1*sin(2*PI*420*t)+0.05*sin(2*PI*2500*t))*(0.5+0.5*sin(2*PI*4*t))*gt(mod(t\\,0.5)\\,0.05):s=%d", rate)
}

// Make writes the case's source as WAV, encodes it into dir as ADTS (ext
// ".aac") or MP4 (".m4a"), and decodes that back with ffmpeg to 32-bit
// float: it returns the encoded file's path and ffmpeg's samples,
// interleaved.
func Make(t testing.TB, dir string, c Case, ext string) (string, []float32) {
	t.Helper()
	ff := FFmpeg(t)
	wav := filepath.Join(dir, c.Name+".wav")
	Run(t, ff, "-f", "lavfi", "-i", c.Source, "-t", strconv.FormatFloat(c.Seconds, 'f', -1, 64),
		"-ac", strconv.Itoa(c.Channels), "-ar", strconv.Itoa(c.Rate), wav)
	out := filepath.Join(dir, c.Name+ext)
	args := []string{"-i", wav, "-c:a", "aac", "-b:a", c.Bitrate}
	args = append(args, c.Encoder...)
	Run(t, ff, append(args, out)...)
	return out, Decode(t, out, c.Channels)
}

// Decode is ffmpeg's decoding of path as interleaved float32.
func Decode(t testing.TB, path string, channels int) []float32 {
	t.Helper()
	raw := path + ".f32"
	Run(t, FFmpeg(t), "-i", path, "-f", "f32le", "-ac", strconv.Itoa(channels), raw)
	b, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float32, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

// Run runs ffmpeg quietly, overwriting outputs.
func Run(t testing.TB, ffmpeg string, args ...string) {
	t.Helper()
	cmd := exec.Command(ffmpeg, append([]string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
	}
}

// Bounds of ISO/IEC 11172-4's accuracy test for a full-accuracy decoder:
// RMS error below 2^-15/sqrt(12) of full scale, no sample off by more
// than 2^-14.
var (
	MaxRMS  = math.Exp2(-15) / math.Sqrt(12)
	MaxDiff = math.Exp2(-14)
)

// MinSNR is the alternative bound where the standard leaves rounding to the
// implementation.
const MinSNR = 90.0

// Result compares a decoder's output with the reference.
type Result struct {
	RMS, Max, SNR float64
}

// Criterion names the bound the result meets: "11172-4" (RMS and maximum),
// "SNR>=90dB", or "" for neither.
func (r Result) Criterion() string {
	switch {
	case r.RMS < MaxRMS && r.Max <= MaxDiff:
		return "11172-4"
	case r.SNR >= MinSNR:
		return "SNR>=90dB"
	}
	return ""
}

// Compare compares two interleaved signals of the same length.
func Compare(got, ref []float32) Result {
	var se, sr, mx float64
	for i := range ref {
		e := float64(got[i]) - float64(ref[i])
		se += e * e
		sr += float64(ref[i]) * float64(ref[i])
		mx = max(mx, math.Abs(e))
	}
	r := Result{RMS: math.Sqrt(se / float64(len(ref))), Max: mx, SNR: math.Inf(1)}
	if se > 0 {
		r.SNR = 10 * math.Log10(sr/se)
	}
	return r
}

// BandDeviation judges noise-substituted audio, whose samples are random
// by design: it splits each channel's long-term power spectrum (averaged
// over 2048-sample Hann-windowed blocks) into third-octave bands and
// returns the largest difference in dB between the two signals' band
// energies, over bands within 60 dB of the loudest.
func BandDeviation(got, ref []float32, channels, rate int) float64 {
	const n = 2048
	worst := 0.0
	for ch := range channels {
		pg, pr := powerSpectrum(got, ch, channels, n), powerSpectrum(ref, ch, channels, n)
		type band struct{ g, r float64 }
		var bands []band
		for lo := 50.0; lo < float64(rate)/2; lo *= math.Pow(2, 1.0/3) {
			hi := lo * math.Pow(2, 1.0/3)
			var b band
			for k := range n / 2 {
				f := float64(k) * float64(rate) / float64(n)
				if f >= lo && f < hi {
					b.g += pg[k]
					b.r += pr[k]
				}
			}
			if b.r > 0 {
				bands = append(bands, b)
			}
		}
		loudest := 0.0
		for _, b := range bands {
			loudest = max(loudest, b.r)
		}
		for _, b := range bands {
			if b.r < loudest*1e-6 {
				continue
			}
			worst = max(worst, math.Abs(10*math.Log10(b.g/b.r)))
		}
	}
	return worst
}

func powerSpectrum(x []float32, ch, channels, n int) []float64 {
	p := make([]float64, n/2)
	buf := make([]complex128, n)
	frames := len(x) / channels
	for start := 0; start+n <= frames; start += n / 2 {
		for i := range n {
			w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n))
			buf[i] = complex(float64(x[(start+i)*channels+ch])*w, 0)
		}
		dft(buf)
		for k := range n / 2 {
			a := cmplx.Abs(buf[k])
			p[k] += a * a
		}
	}
	return p
}

// dft is a plain recursive FFT (n a power of two); speed does not matter
// in a test.
func dft(x []complex128) {
	n := len(x)
	if n == 1 {
		return
	}
	even, odd := make([]complex128, n/2), make([]complex128, n/2)
	for i := range n / 2 {
		even[i], odd[i] = x[2*i], x[2*i+1]
	}
	dft(even)
	dft(odd)
	for k := range n / 2 {
		w := cmplx.Exp(complex(0, -2*math.Pi*float64(k)/float64(n))) * odd[k]
		x[k], x[k+n/2] = even[k]+w, even[k]-w
	}
}
