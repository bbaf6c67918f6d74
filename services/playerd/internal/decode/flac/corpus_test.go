package flac

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// The corpus is made by Debian's flac (the reference encoder) in each test:
// a missing flac skips, except in CI and under `make unit`
// (STORYBOX_REQUIRE_FLAC), where it fails.
func requireFLAC(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("flac"); err != nil {
		if os.Getenv("CI") != "" || os.Getenv("STORYBOX_REQUIRE_FLAC") != "" {
			t.Fatal("flac is required: apt-get install flac")
		}
		t.Skip("flac not installed")
	}
}

type signal struct {
	rate, channels, bps int
	frames              int
	kind                string // "music", "noise"
}

// samples makes a test signal, interleaved: tones with a little noise
// (correlated channels, so the encoder picks each stereo mode somewhere), a
// silent stretch (constant subframes) and a stretch whose low bits are zero
// (wasted bits); "noise" is white noise at full scale.
func (s signal) samples() []int32 {
	rng := rand.New(rand.NewPCG(uint64(s.rate), uint64(s.bps*16+s.channels)))
	out := make([]int32, s.frames*s.channels)
	full := math.Ldexp(1, s.bps-1)
	for i := range s.frames {
		for c := range s.channels {
			var v float64
			switch {
			case s.kind == "noise":
				v = (rng.Float64()*2 - 1) * full
			case i > s.frames/3 && i < s.frames/3+6000:
				v = 0
			default:
				t := float64(i) / float64(s.rate)
				v = 0.45*math.Sin(2*math.Pi*(220+30*float64(c))*t) + 0.3*math.Sin(2*math.Pi*3111*t+float64(c))
				if c%2 == 1 && i%50000 > 25000 {
					v = -v // right far from left: left/side or right/side wins
				}
				v = v*full + rng.NormFloat64()*full/512
			}
			x := int64(math.Round(v))
			x = min(max(x, -int64(full)), int64(full)-1)
			if s.kind != "noise" && i > s.frames/2 && i < s.frames/2+9000 && s.bps > 8 {
				x &^= 7
			}
			out[i*s.channels+c] = int32(x)
		}
	}
	return out
}

func writeRaw(path string, pcm []int32, bps int) error {
	w := (bps + 7) / 8
	b := make([]byte, 0, len(pcm)*w)
	for _, v := range pcm {
		for k := range w {
			b = append(b, byte(v>>(8*k)))
		}
	}
	return os.WriteFile(path, b, 0o644)
}

func readRaw(path string, bps int) ([]int32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w := (bps + 7) / 8
	out := make([]int32, len(b)/w)
	for i := range out {
		var v uint32
		for k := range w {
			v |= uint32(b[i*w+k]) << (8 * k)
		}
		out[i] = int32(v<<(32-8*w)) >> (32 - 8*w)
	}
	return out, nil
}

func rawArgs(s signal) []string {
	return []string{"--force-raw-format", "--endian=little", "--sign=signed",
		"--channels=" + strconv.Itoa(s.channels), "--bps=" + strconv.Itoa(s.bps),
		"--sample-rate=" + strconv.Itoa(s.rate)}
}

// encode writes s through flac with args and returns the file and what
// flac -d makes of it.
func encode(t testing.TB, s signal, args ...string) (string, []int32) {
	t.Helper()
	dir := t.TempDir()
	in, file, ref := filepath.Join(dir, "in.raw"), filepath.Join(dir, "x.flac"), filepath.Join(dir, "ref.raw")
	if err := writeRaw(in, s.samples(), s.bps); err != nil {
		t.Fatal(err)
	}
	cmd := append([]string{"-s", "-f", "-o", file}, args...)
	cmd = append(append(cmd, rawArgs(s)...), in)
	if out, err := exec.Command("flac", cmd...).CombinedOutput(); err != nil {
		t.Fatalf("flac %v: %v\n%s", cmd, err, out)
	}
	if out, err := exec.Command("flac", "-s", "-f", "-d", "--force-raw-format", "--endian=little", "--sign=signed", "-o", ref, file).CombinedOutput(); err != nil {
		t.Fatalf("flac -d: %v\n%s", err, out)
	}
	pcm, err := readRaw(ref, s.bps)
	if err != nil {
		t.Fatal(err)
	}
	return file, pcm
}

func openFile(t testing.TB, path string) *Decoder {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	d, err := NewFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// decodeAll returns every sample, interleaved, and the MD5 of them as
// STREAMINFO computes it.
func decodeAll(d *Decoder) ([]int32, [16]byte, error) {
	var pcm []int32
	h := md5.New()
	w := (d.info.BitsPerSample + 7) / 8
	var b [4]byte
	for {
		fr, err := d.Frame()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return pcm, [16]byte{}, err
		}
		for i := range fr[0] {
			for _, ch := range fr {
				pcm = append(pcm, ch[i])
				binary.LittleEndian.PutUint32(b[:], uint32(ch[i]))
				h.Write(b[:w])
			}
		}
	}
	var sum [16]byte
	copy(sum[:], h.Sum(nil))
	return pcm, sum, nil
}

func firstDiff(a, b []int32) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("sample %d: %d, want %d", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("%d samples, want %d", len(a), len(b))
}

func sameSamples(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var corpus = []struct {
	name string
	s    signal
	args []string
}{
	{"16bit-44k1-stereo-0", signal{44100, 2, 16, 100000, "music"}, []string{"-0"}},
	{"16bit-44k1-stereo-1", signal{44100, 2, 16, 100000, "music"}, []string{"-1"}},
	{"16bit-44k1-stereo-2", signal{44100, 2, 16, 100000, "music"}, []string{"-2"}},
	{"16bit-44k1-stereo-3", signal{44100, 2, 16, 100000, "music"}, []string{"-3"}},
	{"16bit-44k1-stereo-4", signal{44100, 2, 16, 100000, "music"}, []string{"-4"}},
	{"16bit-44k1-stereo-5", signal{44100, 2, 16, 100000, "music"}, []string{"-5"}},
	{"16bit-44k1-stereo-6", signal{44100, 2, 16, 100000, "music"}, []string{"-6"}},
	{"16bit-44k1-stereo-7", signal{44100, 2, 16, 100000, "music"}, []string{"-7"}},
	{"16bit-44k1-stereo-8", signal{44100, 2, 16, 100000, "music"}, []string{"-8"}},
	{"16bit-lax-lpc32", signal{44100, 2, 16, 60000, "music"}, []string{"--lax", "-8", "-l", "32", "-b", "8192", "-r", "15"}},
	{"24bit-lax-lpc32-qlp15", signal{96000, 2, 24, 60000, "music"}, []string{"--lax", "-l", "32", "-q", "15", "-p"}},
	{"24bit-96k-stereo", signal{96000, 2, 24, 100000, "music"}, []string{"-8"}},
	{"24bit-96k-fast", signal{96000, 2, 24, 50000, "music"}, []string{"-0"}},
	{"8bit-mono", signal{22050, 1, 8, 40000, "music"}, []string{"-5"}},
	{"32bit", signal{48000, 2, 32, 40000, "music"}, []string{"-5"}},
	{"32bit-noise", signal{48000, 2, 32, 20000, "noise"}, []string{"-8"}},
	{"32bit-fixed", signal{48000, 2, 32, 20000, "music"}, []string{"-2"}},
	{"1ch", signal{48000, 1, 16, 30000, "music"}, nil},
	{"3ch", signal{48000, 3, 16, 30000, "music"}, nil},
	{"4ch", signal{48000, 4, 16, 30000, "music"}, nil},
	{"5ch", signal{48000, 5, 16, 30000, "music"}, nil},
	{"6ch", signal{48000, 6, 24, 30000, "music"}, nil},
	{"7ch", signal{48000, 7, 16, 30000, "music"}, nil},
	{"8ch", signal{48000, 8, 16, 30000, "music"}, nil},
	{"rate-11025-hz-coded", signal{11025, 2, 16, 30000, "music"}, nil},
	{"rate-12000-khz-coded", signal{12000, 1, 16, 30000, "music"}, nil},
	{"rate-37800-hz-coded", signal{37800, 2, 16, 30000, "music"}, nil},
	{"rate-100000-tens-coded", signal{100000, 2, 16, 30000, "music"}, []string{"--lax"}},
	{"rate-655350", signal{655350, 1, 16, 70000, "music"}, []string{"--lax"}},
	{"rate-1000", signal{1000, 1, 16, 8000, "music"}, nil},
	{"no-constant", signal{44100, 2, 16, 50000, "music"}, []string{"--disable-constant-subframes"}},
	{"no-fixed", signal{44100, 2, 16, 50000, "music"}, []string{"--disable-fixed-subframes"}},
	{"no-verbatim-noise", signal{44100, 2, 16, 30000, "noise"}, []string{"--disable-verbatim-subframes", "-8"}},
	{"noise-escapes", signal{44100, 2, 24, 30000, "noise"}, []string{"--disable-verbatim-subframes", "--disable-constant-subframes", "-r", "8", "-b", "4608"}},
	{"blocksize-odd", signal{44100, 2, 16, 30000, "music"}, []string{"-b", "1000"}},
	{"blocksize-16", signal{44100, 1, 16, 3000, "music"}, []string{"-b", "16"}},
	{"blocksize-65535", signal{44100, 2, 16, 140000, "music"}, []string{"--lax", "-b", "65535"}},
	{"mid-side-only", signal{44100, 2, 16, 30000, "music"}, []string{"-m"}},
}

// TestBitExact decodes each file of the corpus and compares every sample
// with flac -d, and the MD5 of what it decoded with STREAMINFO's.
func TestBitExact(t *testing.T) {
	requireFLAC(t)
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file, ref := encode(t, c.s, c.args...)
			d := openFile(t, file)
			got, sum, err := decodeAll(d)
			if err != nil {
				t.Fatal(err)
			}
			if !sameSamples(got, ref) {
				t.Fatalf("differs from flac -d: %s", firstDiff(got, ref))
			}
			if sum != d.info.MD5 {
				t.Fatalf("MD5 %x, STREAMINFO says %x", sum, d.info.MD5)
			}
			if d.Damaged() != 0 {
				t.Fatalf("%d frames damaged", d.Damaged())
			}
		})
	}
}

var crafted = []struct {
	name string
	c    craft
}{
	{"variable-16bit-stereo", craft{44100, 2, 16, []int{4608, 17, 1000, 192, 256, 4096, 333, 4608, 16, 2000}, true, 1, 0.5}},
	{"variable-32bit-stereo", craft{48000, 2, 32, []int{1024, 999, 4096, 64, 2048, 1111, 300, 4000}, true, 2, 0.9}},
	{"fixed-32bit-stereo", craft{96000, 2, 32, []int{4096, 4096, 4096, 4096, 4096, 4096, 1000}, false, 3, 1}},
	{"variable-12bit", craft{8000, 2, 12, []int{500, 1500, 20, 4608, 700}, true, 4, 0.5}},
	{"variable-20bit-3ch", craft{655350, 3, 20, []int{4608, 4608, 100, 3000}, true, 5, 0.5}},
	{"fixed-8bit-8ch", craft{22050, 8, 8, []int{1152, 1152, 1152, 500}, false, 6, 1}},
	{"variable-24bit-escapes", craft{96000, 2, 24, []int{4608, 4608, 4608, 256}, true, 7, 1}},
}

// TestCrafted decodes streams of our own writer that the reference encoder
// does not make, and checks every sample, the MD5, and that flac -d agrees.
func TestCrafted(t *testing.T) {
	requireFLAC(t)
	for _, c := range crafted {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data, sig := c.c.encode()
			var want []int32
			for i := range sig[0] {
				for ch := range sig {
					want = append(want, int32(sig[ch][i]))
				}
			}
			dir := t.TempDir()
			file, ref := filepath.Join(dir, "x.flac"), filepath.Join(dir, "ref.raw")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.c.bps%8 != 0 {
				// flac writes no raw output of 12 or 20 bits; its test
				// decodes and checks the writer's MD5 of the signal.
				if out, err := exec.Command("flac", "-s", "-t", file).CombinedOutput(); err != nil {
					t.Fatalf("flac -t: %v\n%s", err, out)
				}
			} else {
				out, err := exec.Command("flac", "-s", "-f", "-d", "--force-raw-format", "--endian=little", "--sign=signed", "-o", ref, file).CombinedOutput()
				if err != nil {
					t.Fatalf("flac -d: %v\n%s", err, out)
				}
				refPCM, err := readRaw(ref, c.c.bps)
				if err != nil {
					t.Fatal(err)
				}
				if !sameSamples(refPCM, want) {
					t.Fatalf("flac -d disagrees with the writer: %s", firstDiff(refPCM, want))
				}
			}
			d := openFile(t, file)
			got, sum, err := decodeAll(d)
			if err != nil {
				t.Fatal(err)
			}
			if !sameSamples(got, want) {
				t.Fatalf("%s", firstDiff(got, want))
			}
			if sum != d.info.MD5 || d.Damaged() != 0 {
				t.Fatalf("MD5 %x, want %x; %d damaged", sum, d.info.MD5, d.Damaged())
			}
		})
	}
}
