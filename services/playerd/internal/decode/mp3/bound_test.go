package mp3

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The output of requantised values within xrBound stays within the fuzz
// targets' pcmBound: the largest gain of each linear stage between them,
// the sum of the magnitudes of the coefficients that make one output
// value, found by putting unit values through the decoder's own
// transforms, multiplies to a worst case below it.
func TestWorstCaseGain(t *testing.T) {
	// Stereo: mid/side sums two values (each within the bound: the 1/√2
	// is in the gains), intensity stereo weighs the left channel's.
	weight := 0.0
	for ms := range 2 {
		for p := range 7 {
			for _, w := range isRatio[ms][p] {
				weight = max(weight, math.Abs(float64(w)))
			}
		}
		for sc := range 2 {
			for p := range 32 {
				for _, w := range isLSF[sc][ms][p] {
					weight = max(weight, math.Abs(float64(w)))
				}
			}
		}
	}
	stereo := 2 * weight

	alias := 0.0
	for i := range 8 {
		alias = max(alias, math.Abs(float64(aliasCS[i]))+math.Abs(float64(aliasCA[i])))
	}

	// The IMDCT: an output value sums the granule's 18 values of its
	// subband and, through the overlap, the previous granule's, each with
	// any block type.
	var cur, prev [18]float64
	transform := func(bt int, x *[18]float32, ov *[18]float32, out *[18]float32) {
		if bt == blockShort {
			imdct12(x, ov, out)
			return
		}
		imdct36(x, ov, &imdctWindows[bt], out)
	}
	for _, bt := range []int{blockNormal, blockStart, blockShort, blockStop} {
		var c, p [18]float64
		for k := range 18 {
			var x, ov, out [18]float32
			x[k] = 1
			transform(bt, &x, &ov, &out)
			for i := range 18 {
				c[i] += math.Abs(float64(out[i]))
			}
			// The next granule, zero, outputs the overlap alone, as
			// every block type and the subbands above sbLimit do.
			transform(blockNormal, &[18]float32{}, &ov, &out)
			for i := range 18 {
				p[i] += math.Abs(float64(out[i]))
			}
		}
		for i := range 18 {
			cur[i], prev[i] = max(cur[i], c[i]), max(prev[i], p[i])
		}
	}
	hybrid := 0.0
	for i := range 18 {
		hybrid = max(hybrid, cur[i]+prev[i])
	}

	// The filter bank: an output sample sums the 32 subband samples of
	// the last 16 blocks.
	var sums [32]float64
	for k := range 32 {
		var s synthesis
		var in, out [32]float32
		in[k] = 1
		for range 16 {
			s.block(&in, &out)
			in[k] = 0
			for j := range 32 {
				sums[j] += math.Abs(float64(out[j]))
			}
		}
	}
	synth := 0.0
	for _, v := range sums {
		synth = max(synth, v)
	}

	legal := legalXR()
	t.Logf("an input within full scale gives |xr| <= %.2f; xrBound is %.0f times that", legal, xrBound/legal)
	if xrBound < 2*256*legal {
		t.Errorf("xrBound %d leaves less than 256 times the largest legal value %.2f, twice over for intensity stereo", xrBound, legal)
	}

	gain := stereo * alias * hybrid * synth
	worst := xrBound * gain
	t.Logf("gains: stereo %.3f, alias reduction %.3f, IMDCT with overlap %.2f, filter bank %.2f; product %.0f", stereo, alias, hybrid, synth, gain)
	t.Logf("worst case output %.3g of the bound %.3g", worst, float64(pcmBound))
	if worst > pcmBound/2 {
		t.Errorf("xrBound %d times the worst-case gain %.0f is %.3g, not well below %g", xrBound, gain, worst, float64(pcmBound))
	}
}

// legalXR is the largest requantised value an input within full scale
// gives (xrBound's comment): the sum of the analysis window's magnitudes
// times the largest of the MDCT windows' sums scaled by 4/n.
func legalXR() float64 {
	d := synthesisWindow()
	c := 0.0
	for _, v := range d {
		c += math.Abs(v) / 32
	}
	most := 0.0
	for _, bt := range []int{blockNormal, blockStart, blockStop} {
		w := 0.0
		for _, v := range imdctWindows[bt] {
			w += math.Abs(float64(v)) * 4 / 36
		}
		most = max(most, w)
	}
	w := 0.0
	for _, v := range shortWindow {
		w += math.Abs(float64(v)) * 4 / 12
	}
	return c * max(most, w)
}

// loudStream writes three frames at the usual level, two at level and
// three more, all from one seed.
func loudStream(s genStream, seed uint64, level int) []byte {
	g := &generator{r: rand.New(rand.NewPCG(seed, 255)), s: s, amp: 40}
	data := g.stream(3)
	g.s.level = level
	data = append(data, g.stream(2)...)
	g.s.level = 0
	return append(data, g.stream(3)...)
}

// Granules at the largest gain the syntax allows, with every value at the
// largest escape, are decoded as silence: exactly as the same frames with
// every value zero, so that the overlap into the next granule and the
// filter bank's history stay those of silence too. Decoded as coded they
// reach 1e12.
func TestLoudGranulesAreSilence(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    genStream
	}{
		{"mpeg1-ms-intensity-mixed", genStream{version: 3, sri: 1, bri: 14, mode: modeJoint, modeExt: 3, mixed: true}},
		{"mpeg1-stereo", genStream{version: 3, sri: 0, bri: 14, mode: modeStereo}},
		{"mpeg1-mono-crc", genStream{version: 3, sri: 2, bri: 14, mode: modeMono, crc: true, mixed: true}},
		{"mpeg2-ms-intensity", genStream{version: 2, sri: 0, bri: 14, mode: modeJoint, modeExt: 3}},
		{"mpeg25-mono", genStream{version: 0, sri: 2, bri: 14, mode: modeMono}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.sparse = true
			for seed := range uint64(3) {
				loud, hush := loudStream(tc.s, seed, loudLevel), loudStream(tc.s, seed, hushLevel)
				if len(loud) != len(hush) {
					t.Fatalf("seed %d: the loud stream has %d bytes, the hushed one %d", seed, len(loud), len(hush))
				}
				d, err := NewStream(bytes.NewReader(loud))
				if err != nil {
					t.Fatal(err)
				}
				got := decodeAll(t, d)
				r, err := NewStream(bytes.NewReader(hush))
				if err != nil {
					t.Fatal(err)
				}
				want := decodeAll(t, r)
				peak := 0.0
				for _, v := range got {
					peak = max(peak, math.Abs(float64(v)))
				}
				t.Logf("seed %d: peak %.3g, %d granules refused, the loudest kept %.3g", seed, peak, d.l3.refused, d.l3.loudest)
				if err := checkPCM(got); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if len(got) != len(want) {
					t.Fatalf("seed %d: %d values, the hushed stream %d", seed, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("seed %d: value %d is %g, the hushed stream's %g", seed, i, got[i], want[i])
					}
				}
				h, _ := parseHeader(uint32(loud[0])<<24 | uint32(loud[1])<<16 | uint32(loud[2])<<8 | uint32(loud[3]))
				if want := 2 * h.granules() * h.channels(); d.l3.refused != want {
					t.Errorf("seed %d: %d granules refused, want %d", seed, d.l3.refused, want)
				}
			}
		})
	}
}

// lame's encodings of signals at and beyond full scale keep every granule
// and stay far below xrBound: a full-scale sine low and high, a square
// wave, white noise, channels in opposite phase (all side signal), and
// music driven into clipping.
func TestLegalLevelsStayBelowTheBound(t *testing.T) {
	lame, _ := needTools(t)
	dir := t.TempDir()
	const rate = 44100
	signal := func(f func(i int, c int) float64) [][2]float64 {
		out := make([][2]float64, rate)
		for i := range out {
			for c := range 2 {
				out[i][c] = max(-1, min(1, f(i, c)))
			}
		}
		return out
	}
	sine := func(hz float64) func(int, int) float64 {
		return func(i, _ int) float64 { return math.Sin(2 * math.Pi * hz * float64(i) / rate) }
	}
	r := rand.New(rand.NewPCG(1, 2))
	music := musicLike(rate, 2, 1, 3)
	sources := []struct {
		name string
		src  [][2]float64
	}{
		{"sine-1k", signal(sine(1000))},
		{"sine-12k", signal(sine(12000))},
		{"square-110", signal(func(i, _ int) float64 { return math.Copysign(1, math.Sin(2*math.Pi*110*float64(i)/rate)) })},
		{"noise", signal(func(int, int) float64 { return 2*r.Float64() - 1 })},
		{"opposite", signal(func(i, c int) float64 { return sine(440)(i, c) * float64(1-2*c) })},
		{"clipped-music", signal(func(i, c int) float64 { return 8 * music[i][c] })},
	}
	encodings := [][]string{
		{"-b", "320", "-m", "s"},
		{"-V", "0", "-m", "j"},
		{"-b", "128", "-m", "f"},
		{"-b", "64", "-m", "m", "--resample", "22.05"},
		{"-b", "16", "-m", "j", "--resample", "8"},
	}
	var loudest float32
	for _, s := range sources {
		wav := filepath.Join(dir, s.name+".wav")
		if err := writeWAV(wav, rate, 2, s.src); err != nil {
			t.Fatal(err)
		}
		for i, e := range encodings {
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.mp3", s.name, i))
			if out, err := exec.Command(lame, append(append([]string{"--quiet", "--noreplaygain"}, e...), wav, path)...).CombinedOutput(); err != nil {
				t.Fatalf("lame %v: %v: %s", e, err, out)
			}
			d := openFile(t, path)
			decodeAll(t, d)
			if d.l3.refused != 0 {
				t.Errorf("%s %v: %d granules refused", s.name, e, d.l3.refused)
			}
			loudest = max(loudest, d.l3.loudest)
			t.Logf("%-14s %-26s largest |xr| %.2f", s.name, strings.Join(e, " "), d.l3.loudest)
		}
	}
	t.Logf("largest |xr| of all %.2f, 1/%.0f of xrBound", loudest, xrBound/loudest)
	if legal := legalXR(); float64(loudest) > legal {
		t.Errorf("largest |xr| %.2f, beyond %.2f, the most an input within full scale gives", loudest, legal)
	}
}
