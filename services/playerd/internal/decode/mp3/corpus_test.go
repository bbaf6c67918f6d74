package mp3

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The accuracy test: files made here by Debian's lame from WAV sources
// made here, decoded by this package and by Debian's mpg123 into 32-bit
// float. ISO/IEC 11172-4's "full accuracy" asks of every file an RMS
// difference below 2^-15/√12 of full scale and no sample off by more than
// 2^-14; a file with a LAME header must decode to exactly the length of
// its source.

var (
	fullAccuracyRMS = math.Ldexp(1, -15) / math.Sqrt(12)
	fullAccuracyMax = math.Ldexp(1, -14)
)

// needTools returns the paths of lame and mpg123. Without them the test is
// skipped, except in CI and under `make test` (STORYBOX_REQUIRE_MP3TOOLS),
// which install them: there a missing one fails.
func needTools(t testing.TB) (lame, mpg123 string) {
	t.Helper()
	var paths []string
	for _, p := range []string{"lame", "mpg123"} {
		path, err := exec.LookPath(p)
		if err != nil {
			if os.Getenv("CI") != "" || os.Getenv("STORYBOX_REQUIRE_MP3TOOLS") != "" {
				t.Fatalf("%s is missing; make deps installs it (Debian packages lame, mpg123)", p)
			}
			t.Skipf("%s is missing (Debian packages lame, mpg123; make deps installs them)", p)
		}
		paths = append(paths, path)
	}
	return paths[0], paths[1]
}

// corpusFile is one file of the corpus: a source and lame's arguments.
type corpusFile struct {
	name     string
	rate     int
	channels int
	seconds  float64
	lame     []string
	gapless  bool // has a LAME header: decodes to the source's length
}

// corpus covers MPEG-1, 2 and 2.5 at 8 to 48 kHz and 8 to 320 kbit/s,
// constant and variable bitrates, mono, stereo, joint stereo and forced
// mid/side, CRC protection, and a file without a LAME header. Every source
// has transients that make lame switch to short blocks.
var corpus = []corpusFile{
	{"mpeg1-44k-128-joint", 44100, 2, 2, []string{"-b", "128"}, true},
	{"mpeg1-48k-320-stereo", 48000, 2, 1.5, []string{"-b", "320", "-m", "s"}, true},
	{"mpeg1-32k-40-mono", 32000, 1, 2, []string{"-b", "40", "-m", "m", "--resample", "32"}, true},
	{"mpeg1-44k-v0-ms", 44100, 2, 1.5, []string{"-V", "0", "-m", "f"}, true},
	{"mpeg1-44k-v5-joint", 44100, 2, 2, []string{"-V", "5"}, true},
	{"mpeg1-48k-96-crc", 48000, 2, 1.5, []string{"-b", "96", "-p", "--resample", "48"}, true},
	{"mpeg1-44k-192-notag", 44100, 2, 1.5, []string{"-b", "192", "-t"}, false},
	{"mpeg2-22k-64-joint", 22050, 2, 2, []string{"-b", "64"}, true},
	{"mpeg2-24k-v4-stereo", 24000, 2, 2, []string{"-V", "4", "-m", "s"}, true},
	{"mpeg2-16k-8-mono", 16000, 1, 2, []string{"-b", "8", "-m", "m", "--resample", "16"}, false},
	{"mpeg2-16k-160-ms", 16000, 2, 1.5, []string{"-b", "160", "-m", "f"}, true},
	// Frames under 177 bytes have no room for lame's header: no decoder
	// can trim these.
	{"mpeg25-8k-8-mono", 8000, 1, 3, []string{"-b", "8", "-m", "m"}, false},
	{"mpeg25-8k-24-joint", 8000, 2, 2, []string{"-b", "24"}, true},
	{"mpeg25-11k-32-joint", 11025, 2, 2, []string{"-b", "32"}, true},
	{"mpeg25-12k-v6-stereo", 12000, 2, 2, []string{"-V", "6", "-m", "s"}, true},
}

// musicLike is a test signal that exercises a codec as music does: a few
// harmonic voices gliding in pitch, noise shaped to fall with frequency,
// sharp percussive bursts that force short blocks, a moment of silence,
// and channels that differ.
func musicLike(rate, channels int, seconds float64, seed uint64) [][2]float64 {
	n := int(seconds * float64(rate))
	out := make([][2]float64, n)
	r := rand.New(rand.NewPCG(seed, 7))
	var lp [2]float64
	burst := 0
	for i := range n {
		t := float64(i) / float64(rate)
		if i%(rate/4) == rate/8 {
			burst = rate / 50
		}
		for c := range channels {
			f0 := 220 * (1 + 0.5*float64(c)) * (1 + 0.02*math.Sin(2*math.Pi*0.7*t))
			v := 0.0
			for h := 1; h <= 6; h++ {
				if f := f0 * float64(h); f < float64(rate)/2 {
					v += 0.12 / float64(h) * math.Sin(2*math.Pi*f*t+float64(h*c))
				}
			}
			lp[c] = 0.9*lp[c] + 0.1*(r.Float64()*2-1)
			v += 0.05 * lp[c]
			if burst > 0 {
				v += 0.35 * (r.Float64()*2 - 1) * float64(burst) / float64(rate/50)
			}
			if t > seconds*0.6 && t < seconds*0.7 {
				v = 0
			}
			out[i][c] = v
		}
		if burst > 0 {
			burst--
		}
	}
	return out
}

func writeWAV(path string, rate, channels int, frames [][2]float64) error {
	var b bytes.Buffer
	n := len(frames) * channels * 2
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(channels), uint32(rate), uint32(rate * channels * 2), uint16(channels * 2), uint16(16)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(n))
	for _, f := range frames {
		for c := range channels {
			binary.Write(&b, binary.LittleEndian, int16(math.Round(f[c]*32767)))
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// encoded is a corpus file made and decoded by the reference.
type encoded struct {
	corpusFile
	path   string
	source int // samples per channel of the source
	src    [][2]float64
	ref    []float32 // mpg123's decoding, interleaved
}

var (
	corpusOnce sync.Once
	corpusDir  string
	corpusOut  []encoded
	corpusErr  error
)

// makeCorpus encodes the corpus once per test binary, in parallel.
func makeCorpus(t *testing.T) []encoded {
	lame, mpg123 := needTools(t)
	corpusOnce.Do(func() {
		corpusDir, corpusErr = os.MkdirTemp("", "mp3corpus")
		if corpusErr != nil {
			return
		}
		corpusOut = make([]encoded, len(corpus))
		var wg sync.WaitGroup
		errs := make([]error, len(corpus))
		for i, f := range corpus {
			wg.Go(func() { corpusOut[i], errs[i] = encode(lame, mpg123, f, uint64(i)) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				corpusErr = err
				return
			}
		}
	})
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return corpusOut
}

func encode(lame, mpg123 string, f corpusFile, seed uint64) (encoded, error) {
	src := musicLike(f.rate, f.channels, f.seconds, seed)
	wav := filepath.Join(corpusDir, f.name+".wav")
	if err := writeWAV(wav, f.rate, f.channels, src); err != nil {
		return encoded{}, err
	}
	path := filepath.Join(corpusDir, f.name+".mp3")
	args := append([]string{"--quiet", "--noreplaygain"}, f.lame...)
	if out, err := exec.Command(lame, append(args, wav, path)...).CombinedOutput(); err != nil {
		return encoded{}, fmt.Errorf("lame %s: %v: %s", strings.Join(f.lame, " "), err, out)
	}
	raw, err := exec.Command(mpg123, "-q", "-e", "f32", "-s", path).Output()
	if err != nil {
		return encoded{}, fmt.Errorf("mpg123 %s: %v", f.name, err)
	}
	ref := make([]float32, len(raw)/4)
	for i := range ref {
		ref[i] = math.Float32frombits(binary.NativeEndian.Uint32(raw[4*i:]))
	}
	return encoded{corpusFile: f, path: path, source: len(src), src: src, ref: ref}, nil
}

// sourceLevel is the RMS of channel c of a corpus file's source.
func sourceLevel(f encoded, c int) float64 {
	var e float64
	for _, v := range f.src {
		e += v[c] * v[c]
	}
	return math.Sqrt(e / float64(len(f.src)))
}

// decodeAll decodes a whole file or stream.
func decodeAll(t testing.TB, d *Decoder) []float32 {
	t.Helper()
	var out []float32
	buf := make([]float32, 1000)
	for {
		n, err := d.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func openFile(t testing.TB, path string) *Decoder {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// difference is the RMS and largest difference of two decodings, per
// channel, over the samples both have.
func difference(a, b []float32, channels int) (rms, most [2]float64) {
	var sum [2]float64
	n := min(len(a), len(b)) / channels * channels
	for i := range n {
		c := i % channels
		e := math.Abs(float64(a[i]) - float64(b[i]))
		sum[c] += e * e
		most[c] = max(most[c], e)
	}
	for c := range channels {
		rms[c] = math.Sqrt(sum[c] / float64(max(1, n/channels)))
	}
	return rms, most
}

func TestAccuracyAgainstMpg123(t *testing.T) {
	files := makeCorpus(t)
	t.Logf("full accuracy: RMS < %.3g, max <= %.3g (of full scale)", fullAccuracyRMS, fullAccuracyMax)
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			d := openFile(t, f.path)
			if d.SampleRate() != f.rate || d.Channels() != f.channels {
				t.Fatalf("%d Hz, %d channels; want %d, %d", d.SampleRate(), d.Channels(), f.rate, f.channels)
			}
			got := decodeAll(t, d)
			if len(got) != len(f.ref) {
				t.Errorf("%d samples, mpg123 %d", len(got)/f.channels, len(f.ref)/f.channels)
			}
			if int64(len(got)/f.channels) != d.Length() {
				t.Errorf("%d samples, Length says %d", len(got)/f.channels, d.Length())
			}
			if f.gapless && len(got)/f.channels != f.source {
				t.Errorf("%d samples, the source has %d", len(got)/f.channels, f.source)
			}
			// It is sound, the source's (MPEG-2.5 at 8 kHz made none in
			// go-mp3): the level of each channel within 1 dB of it.
			for c := range f.channels {
				var e float64
				for i := c; i < len(got); i += f.channels {
					e += float64(got[i]) * float64(got[i])
				}
				level := math.Sqrt(e / float64(len(got)/f.channels))
				if want := sourceLevel(f, c); math.Abs(20*math.Log10(level/want)) > 1 {
					t.Errorf("channel %d: level %.4f, the source's %.4f", c, level, want)
				}
			}
			rms, most := difference(got, f.ref, f.channels)
			for c := range f.channels {
				t.Logf("%-22s ch%d  RMS %.3g  max %.3g", f.name, c, rms[c], most[c])
				if rms[c] >= fullAccuracyRMS || most[c] > fullAccuracyMax {
					t.Errorf("channel %d: RMS %.3g, max %.3g: not full accuracy", c, rms[c], most[c])
				}
			}
		})
	}
}

// A stream decodes to the same samples as the file, read in any sizes, and
// then, as it does not trust the header's length, the padding.
func TestStreamMatchesFile(t *testing.T) {
	for _, f := range makeCorpus(t) {
		t.Run(f.name, func(t *testing.T) {
			want := decodeAll(t, openFile(t, f.path))
			data, err := os.ReadFile(f.path)
			if err != nil {
				t.Fatal(err)
			}
			d, err := NewStream(&choppy{data: data})
			if err != nil {
				t.Fatal(err)
			}
			got := decodeAll(t, d)
			if len(got) < len(want) {
				t.Fatalf("stream %d samples, file %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("sample %d: stream %v, file %v", i, got[i], want[i])
				}
			}
		})
	}
}

// choppy is a stream that returns a few bytes at a time, as a network may.
type choppy struct {
	data []byte
	n    int
}

func (c *choppy) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	c.n++
	k := min(len(p), len(c.data), 1+c.n*37%700)
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}
