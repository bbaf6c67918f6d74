package decode

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

type oggFLACCase struct {
	name                string
	rate, channels, bps int
	frames              int
	args                []string
}

// The corpus is made by Debian's flac with --ogg in each test; flac -d of
// the same file is the reference the samples must equal.
var oggFLACCorpus = []oggFLACCase{
	{"16bit-44k1-stereo", 44100, 2, 16, 100000, nil},
	{"24bit-96k-stereo", 96000, 2, 24, 120000, []string{"-8"}},
	{"16bit-mono", 22050, 1, 16, 50000, []string{"-b", "1152"}},
	{"16bit-6ch", 48000, 6, 16, 40000, nil},
	{"8bit-blocksize-192", 8000, 2, 8, 20000, []string{"--lax", "-b", "192"}},
}

func requireFLACTool(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("flac"); err != nil {
		if os.Getenv("CI") != "" || os.Getenv("STORYBOX_REQUIRE_FLAC") != "" {
			t.Fatal("flac is required: apt-get install flac")
		}
		t.Skip("flac not installed")
	}
}

// oggFLACOf encodes c's signal (tones with noise, and a silent stretch) to
// Ogg FLAC and returns the file and flac -d's samples, interleaved.
func oggFLACOf(t *testing.T, c oggFLACCase, extra ...string) ([]byte, []int32) {
	t.Helper()
	requireFLACTool(t)
	rng := rand.New(rand.NewPCG(uint64(c.rate), uint64(c.bps)))
	w := (c.bps + 7) / 8
	full := math.Ldexp(1, c.bps-1)
	raw := make([]byte, 0, c.frames*c.channels*w)
	for i := range c.frames {
		for ch := range c.channels {
			v := 0.0
			if i < c.frames/3 || i > c.frames/3+3000 {
				tm := float64(i) / float64(c.rate)
				v = (0.5*math.Sin(2*math.Pi*(330+40*float64(ch))*tm) + 0.2*math.Sin(2*math.Pi*2500*tm)) * full
				v += rng.NormFloat64() * full / 256
			}
			x := min(max(int64(math.Round(v)), -int64(full)), int64(full)-1)
			for k := range w {
				raw = append(raw, byte(x>>(8*k)))
			}
		}
	}
	dir := t.TempDir()
	in, file, ref := filepath.Join(dir, "in.raw"), filepath.Join(dir, "x.oga"), filepath.Join(dir, "ref.raw")
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	format := []string{"--force-raw-format", "--endian=little", "--sign=signed"}
	args := append([]string{"-s", "-f", "--ogg", "-o", file}, format...)
	args = append(args, "--channels="+strconv.Itoa(c.channels), "--bps="+strconv.Itoa(c.bps), "--sample-rate="+strconv.Itoa(c.rate))
	args = append(append(append(args, c.args...), extra...), in)
	if out, err := exec.Command("flac", args...).CombinedOutput(); err != nil {
		t.Fatalf("flac %v: %v\n%s", args, err, out)
	}
	if out, err := exec.Command("flac", append([]string{"-s", "-f", "-d", "--ogg", "-o", ref}, append(format, file)...)...).CombinedOutput(); err != nil {
		t.Fatalf("flac -d: %v\n%s", err, out)
	}
	b, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int32, len(b)/w)
	for i := range pcm {
		var v uint32
		for k := range w {
			v |= uint32(b[i*w+k]) << (8 * k)
		}
		pcm[i] = int32(v<<(32-8*w)) >> (32 - 8*w)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data, pcm
}

// want is what the stream should give for sample i of the reference: the
// first pair of channels (mono on both sides) at the stream's scale.
func oggFLACWant(c oggFLACCase, ref []int32, i int) [2]float64 {
	scale := 1 / math.Ldexp(1, c.bps-1)
	l := ref[i*c.channels]
	r := l
	if c.channels > 1 {
		r = ref[i*c.channels+1]
	}
	return [2]float64{float64(l) * scale, float64(r) * scale}
}

// TestOggFLACBitExact: every file of the corpus plays sample for sample as
// flac -d decodes it, to its length, and its duration comes from the
// headers.
func TestOggFLACBitExact(t *testing.T) {
	for _, c := range oggFLACCorpus {
		t.Run(c.name, func(t *testing.T) {
			data, ref := oggFLACOf(t, c)
			if got := len(ref) / c.channels; got != c.frames {
				t.Fatalf("flac -d gave %d samples, want %d", got, c.frames)
			}
			if kind := sniff(data[:64]); kind != "oggflac" {
				t.Fatalf("sniffed %q", kind)
			}
			g, format, err := open(memSource(data))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if int(format.SampleRate) != c.rate || format.NumChannels != min(c.channels, 2) || g.Len() != c.frames {
				t.Fatalf("format %+v, length %d", format, g.Len())
			}
			buf := make([][2]float64, 1234)
			at := 0
			for {
				n, ok := g.Stream(buf)
				for i := range n {
					if want := oggFLACWant(c, ref, at+i); buf[i] != want {
						t.Fatalf("sample %d: %v, want %v", at+i, buf[i], want)
					}
				}
				at += n
				if !ok {
					break
				}
			}
			if err := g.Err(); err != nil || at != c.frames || g.Position() != c.frames {
				t.Fatalf("%d samples, position %d, err %v; want %d", at, g.Position(), err, c.frames)
			}
			d, err := duration(memSource(data))
			if err != nil || d != float64(c.frames)/float64(c.rate) {
				t.Fatalf("duration %v, %v", d, err)
			}
		})
	}
}

// TestOggFLACSeek: a seek lands on its sample exactly, from anywhere:
// frame boundaries, inside frames, the first and last samples and the end.
func TestOggFLACSeek(t *testing.T) {
	for _, c := range oggFLACCorpus[:3] {
		t.Run(c.name, func(t *testing.T) {
			data, ref := oggFLACOf(t, c)
			g, _, err := open(memSource(data))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			buf := make([][2]float64, 700)
			rng := rand.New(rand.NewPCG(1, 2))
			targets := []int{0, 4096, 4095, 4097, c.frames - 1, c.frames / 2, 1, c.frames - 700, 0}
			for range 20 {
				targets = append(targets, rng.IntN(c.frames))
			}
			for _, p := range targets {
				if err := g.Seek(p); err != nil {
					t.Fatalf("seek %d: %v", p, err)
				}
				if g.Position() != p {
					t.Fatalf("seek %d: position %d", p, g.Position())
				}
				n, _ := g.Stream(buf)
				if n != min(len(buf), c.frames-p) {
					t.Fatalf("seek %d: %d samples", p, n)
				}
				for i := range n {
					if want := oggFLACWant(c, ref, p+i); buf[i] != want {
						t.Fatalf("seek %d: sample %d: %v, want %v", p, p+i, buf[i], want)
					}
				}
				if g.Position() != p+n {
					t.Fatalf("seek %d: position %d after %d", p, g.Position(), n)
				}
			}
			if err := g.Seek(c.frames); err != nil {
				t.Fatal(err)
			}
			if n, ok := g.Stream(buf); n != 0 || ok {
				t.Fatalf("at the end: %d samples", n)
			}
		})
	}
}

// TestOggFLACUnknownLength: with STREAMINFO's count left at zero (an
// encoder writing to a pipe), the length is the last granule position.
func TestOggFLACUnknownLength(t *testing.T) {
	c := oggFLACCorpus[0]
	data, _ := oggFLACOf(t, c)
	// The page reader does not check page CRCs, so the count can be zeroed
	// in place: it is the last 36 bits before the MD5 in the first packet.
	i := bytes.Index(data, []byte("fLaC")) + 4 + 4
	data[i+13] &^= 0x0F
	binary.BigEndian.PutUint32(data[i+14:], 0)
	g, _, err := open(memSource(data))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Len() != c.frames {
		t.Fatalf("length %d, want %d", g.Len(), c.frames)
	}
	if d, err := duration(memSource(data)); err != nil || d != float64(c.frames)/float64(c.rate) {
		t.Fatalf("duration %v, %v", d, err)
	}
}

// TestOggFLACDamage: a frame whose CRC fails plays as silence of its
// length; the samples after it are in place and the length holds.
func TestOggFLACDamage(t *testing.T) {
	c := oggFLACCorpus[0]
	data, ref := oggFLACOf(t, c)
	// Damage a byte in the middle of the file, inside some frame's audio.
	data[len(data)/2] ^= 0x55
	g, _, err := open(memSource(data))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	buf := make([][2]float64, 4096)
	var got [][2]float64
	for {
		n, ok := g.Stream(buf)
		got = append(got, buf[:n]...)
		if !ok {
			break
		}
	}
	if g.Err() != nil || len(got) != c.frames {
		t.Fatalf("%d samples, err %v; want %d", len(got), g.Err(), c.frames)
	}
	wrong, first := 0, -1
	for i := range got {
		if got[i] != oggFLACWant(c, ref, i) {
			if got[i] != [2]float64{} {
				t.Fatalf("sample %d: %v, neither the reference nor silence", i, got[i])
			}
			if first < 0 {
				first = i
			}
			wrong++
		}
	}
	if wrong == 0 || wrong > 4608 || first%4096 != 0 {
		t.Fatalf("%d samples silenced from %d, want one frame", wrong, first)
	}
}

// TestOggFLACTags: title, artist, album and the front cover come from the
// comment and picture blocks; the file's scan reads them with its duration.
func TestOggFLACTags(t *testing.T) {
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	var pic bytes.Buffer
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	cover := filepath.Join(dir, "cover.png")
	if err := os.WriteFile(cover, pic.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c := oggFLACCorpus[2]
	data, _ := oggFLACOf(t, c, "-T", "TITLE=Der Mond", "-T", "ARTIST=Anna", "-T", "ALBUM=Nachtlieder",
		"--picture=3|image/png|||"+cover)
	path := filepath.Join(dir, "x.oga")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := ReadInfo(path)
	if err != nil || info.TagErr != nil {
		t.Fatal(err, info.TagErr)
	}
	tg := info.Tags
	if tg.Title != "Der Mond" || tg.Artist != "Anna" || tg.Album != "Nachtlieder" {
		t.Fatalf("tags %+v", tg)
	}
	if tg.Picture == nil || tg.Picture.MIMEType != "image/png" || !bytes.Equal(tg.Picture.Data, pic.Bytes()) {
		t.Fatalf("picture %+v", tg.Picture)
	}
	if info.Duration != float64(c.frames)/float64(c.rate) {
		t.Fatalf("duration %v", info.Duration)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ProbeFile(f)
	if err != nil || p.Format != "oggflac" || p.Ext != ".oga" {
		t.Fatalf("probe %+v, %v", p, err)
	}
}

// TestOggFLACDamagedPage: a page whose header is lost (its capture pattern
// or its segment table) costs its frames as silence; the pages after it
// play in place, to the stream's length, without an error.
func TestOggFLACDamagedPage(t *testing.T) {
	c := oggFLACCorpus[0]
	clean, ref := oggFLACOf(t, c)
	for _, name := range []string{"capture", "segments"} {
		t.Run(name, func(t *testing.T) {
			data := bytes.Clone(clean)
			at := bytes.Index(data[len(data)/2:], []byte("OggS")) + len(data)/2
			if name == "capture" {
				data[at] = 'X'
			} else {
				data[at+27] ^= 0x3C // the first lacing value
			}
			g, _, err := open(memSource(data))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			buf := make([][2]float64, 4096)
			var got [][2]float64
			for {
				n, ok := g.Stream(buf)
				got = append(got, buf[:n]...)
				if !ok {
					break
				}
			}
			if g.Err() != nil || len(got) != c.frames {
				t.Fatalf("%d samples, err %v; want %d", len(got), g.Err(), c.frames)
			}
			silenced := 0
			for i := range got {
				if got[i] != oggFLACWant(c, ref, i) {
					if got[i] != [2]float64{} {
						t.Fatalf("sample %d: %v, neither the reference nor silence", i, got[i])
					}
					silenced++
				}
			}
			if silenced == 0 || silenced > c.frames/4 {
				t.Fatalf("%d samples silenced", silenced)
			}
		})
	}
}
