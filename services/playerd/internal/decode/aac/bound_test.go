package aac

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/decode/aac/aactest"
)

// craftCh is one channel stream of long windows at 44.1 kHz written by
// hand: band k up to len(cb) has codebook cb[k]. Codebook 11 bands hold
// val in every line at the global gain (every scale factor delta 0);
// intensity bands (15) step their position to isPos, 60 at most per band;
// the first noise band (13) has energy nrg, the others the same. tns adds
// an order-12 filter with the largest reflection coefficients over every
// band TNS may reach.
type craftCh struct {
	gain  int
	cb    []int
	val   int
	isPos int
	nrg   int
	tns   bool
}

// craftRate is the sampling_frequency_index of crafted frames, 44.1 kHz.
const craftRate = 4

func (c craftCh) icsInfo() [][2]uint32 {
	// ics_reserved_bit, only_long, sine, max_sfb, no prediction
	return [][2]uint32{{0, 1}, {onlyLong, 2}, {0, 1}, {uint32(len(c.cb)), 6}, {0, 1}}
}

// ics writes individual_channel_stream (4.4.2.7).
func (c craftCh) ics(common bool) [][2]uint32 {
	f := [][2]uint32{{uint32(c.gain), 8}}
	if !common {
		f = append(f, c.icsInfo()...)
	}
	for k := 0; k < len(c.cb); {
		n := 1
		for k+n < len(c.cb) && c.cb[k+n] == c.cb[k] {
			n++
		}
		f = append(f, [2]uint32{uint32(c.cb[k]), 4})
		for r := n; ; r -= 31 {
			if r < 31 {
				f = append(f, [2]uint32{uint32(r), 5})
				break
			}
			f = append(f, [2]uint32{31, 5})
		}
		k += n
	}
	sfDelta := func(d int) [2]uint32 { return [2]uint32{sfCodes[d+60], uint32(sfBits[d+60])} }
	pos, firstNoise := 0, true
	for _, cb := range c.cb {
		switch cb {
		case zeroHCB:
		case intensityHCB, intensityHCB2:
			d := max(c.isPos-pos, -60)
			pos += d
			f = append(f, sfDelta(d))
		case noiseHCB:
			if firstNoise {
				f = append(f, [2]uint32{uint32(c.nrg - (c.gain - 90) + 256), 9})
				firstNoise = false
			} else {
				f = append(f, sfDelta(0))
			}
		default:
			f = append(f, sfDelta(0))
		}
	}
	f = append(f, [2]uint32{0, 1}) // no pulses
	if c.tns {
		// n_filt 1, coef_res 4 bits, length, order 12, upwards, no
		// compression, every coefficient 7: sin(7/7.5·π/2) = 0.9945.
		f = append(f, [2]uint32{1, 1}, [2]uint32{1, 2}, [2]uint32{1, 1}, [2]uint32{63, 6}, [2]uint32{12, 5}, [2]uint32{0, 1}, [2]uint32{0, 1})
		for range 12 {
			f = append(f, [2]uint32{7, 4})
		}
	} else {
		f = append(f, [2]uint32{0, 1})
	}
	f = append(f, [2]uint32{0, 1}) // no gain control
	swb := bands[craftRate].long
	for k, cb := range c.cb {
		if cb != escHCB {
			continue
		}
		x := min(c.val, 16)
		idx := x*17 + x
		for range (swb[k+1] - swb[k]) / 2 {
			f = append(f, [2]uint32{uint32(specCodes[escHCB-1][idx]), uint32(specBits[escHCB-1][idx])})
			if x != 0 {
				f = append(f, [2]uint32{0, 2}) // both positive
			}
			if x == 16 {
				for range 2 {
					n := 31 - int(math.Floor(math.Log2(float64(c.val)))) // leading zeros of a 32-bit value
					n = 31 - n
					for range n - 4 {
						f = append(f, [2]uint32{1, 1})
					}
					f = append(f, [2]uint32{0, 1}, [2]uint32{uint32(c.val - 1<<n), uint32(n)})
				}
			}
		}
	}
	return f
}

// sce and cpe write a raw_data_block of one element and END.
func sce(c craftCh) []byte {
	f := append([][2]uint32{{idSCE, 3}, {0, 4}}, c.ics(false)...)
	return packBits(append(f, [2]uint32{idEND, 3})...)
}

func cpe(l, r craftCh) []byte {
	f := append([][2]uint32{{idCPE, 3}, {0, 4}, {1, 1}}, l.icsInfo()...)
	f = append(f, [2]uint32{0, 2}) // no mid/side
	f = append(f, l.ics(true)...)
	f = append(f, r.ics(true)...)
	return packBits(append(f, [2]uint32{idEND, 3})...)
}

func bandsOf(n, cb int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = cb
	}
	return out
}

// Frames whose spectrum, where it reaches the filter bank, is beyond any
// legal level decode as silence, exactly as the same frames with a zero
// spectrum there: the frame before fades out through the overlap and the
// frame after starts from silence. Each stage that can raise a value is
// tried: an escape at the largest scale factor, noise at the largest
// energy, an intensity position that raises a legal left channel, and a
// TNS filter that raises a legal spectrum.
func TestLoudFramesAreSilence(t *testing.T) {
	quiet := craftCh{gain: 100, cb: bandsOf(8, escHCB), val: 3}
	tnsBands := append([]int{escHCB}, bandsOf(41, zeroHCB)...)
	for _, tc := range []struct {
		name          string
		stereo        bool
		loud, silent  []byte
		before, after []byte
	}{
		{
			name:   "escape at global_gain 255",
			loud:   sce(craftCh{gain: 255, cb: bandsOf(8, escHCB), val: 8191}),
			silent: sce(craftCh{gain: 255, cb: bandsOf(8, escHCB), val: 0}),
		},
		{
			name:   "noise energy 155",
			loud:   sce(craftCh{gain: 200, cb: bandsOf(8, noiseHCB), nrg: 155}),
			silent: sce(craftCh{gain: 200, cb: bandsOf(8, zeroHCB)}),
		},
		{
			// The left channel at 6.1e7, below the 8.5e7 full scale
			// allows, the right one 2^(155/4) times that.
			name:   "intensity position -155",
			stereo: true,
			loud:   cpe(craftCh{gain: 168, cb: bandsOf(8, escHCB), val: 100}, craftCh{gain: 168, cb: bandsOf(8, intensityHCB), isPos: -155}),
			silent: cpe(craftCh{gain: 168, cb: bandsOf(8, escHCB), val: 100}, craftCh{gain: 168, cb: bandsOf(8, zeroHCB)}),
		},
		{
			// Four lines at 6.1e7, below the 8.5e7 full scale allows,
			// through the filter.
			name:   "TNS of order 12",
			loud:   sce(craftCh{gain: 168, cb: tnsBands, val: 100, tns: true}),
			silent: sce(craftCh{gain: 168, cb: tnsBands, val: 0, tns: true}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after := sce(quiet), sce(quiet)
			channels := 1
			if tc.stereo {
				before, after = cpe(quiet, quiet), cpe(quiet, quiet)
				channels = 2
			}
			decode := func(middle []byte) ([][]float32, toolStats) {
				d, err := NewDecoder(Config{ObjectType: aotLC, RateIndex: craftRate, SampleRate: sampleRates[craftRate], Channels: channels})
				if err != nil {
					t.Fatal(err)
				}
				out := make([][]float32, channels)
				for i, f := range [][]byte{before, middle, after} {
					pcm, err := d.Decode(f)
					if err != nil {
						t.Fatalf("frame %d: %v", i, err)
					}
					for c := range pcm {
						out[c] = append(out[c], pcm[c]...)
					}
				}
				return out, d.stats
			}
			got, stats := decode(tc.loud)
			want, _ := decode(tc.silent)
			peak := 0.0
			for _, ch := range got {
				for _, v := range ch {
					peak = max(peak, math.Abs(float64(v)))
				}
			}
			t.Logf("peak %.3g, %d channel frames refused, the loudest kept %.3g (tools %v)", peak, stats.refused, stats.loudest, stats)
			if err := checkPCM(got); err != nil {
				t.Fatal(err)
			}
			for c := range got {
				for i := range got[c] {
					if got[c][i] != want[c][i] {
						t.Fatalf("channel %d sample %d is %g, with a silent frame %g", c, i, got[c][i], want[c][i])
					}
				}
			}
			if stats.refused != 1 {
				t.Errorf("%d channel frames refused, want 1", stats.refused)
			}
		})
	}
}

// legalSpec is the largest spectral value an input within full scale
// gives (specBound's comment): 2 · 32768 times the largest sum of a
// window's values, of the long and short windows of both shapes.
func legalSpec() float64 {
	most := 0.0
	for _, w := range [][]float32{sineLong[:], kbdLong[:], sineShort[:], kbdShort[:]} {
		sum := 0.0
		for _, v := range w {
			sum += 2 * float64(v) // the rising half and the falling one
		}
		most = max(most, sum)
	}
	return 2 * 32768 * most
}

// The output of spectra within specBound stays within the fuzz targets'
// pcmBound: an output sample sums, through the IMDCT and a window at most
// 1, a long window's values and the previous frame's overlap, or that
// overlap and two short windows'. The sums of the magnitudes of their
// coefficients, found by putting unit values through the decoder's own
// transforms, bound the gain.
func TestWorstCaseGain(t *testing.T) {
	d, err := NewDecoder(Config{ObjectType: aotLC, RateIndex: craftRate, SampleRate: sampleRates[craftRate], Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(t *imdct, m int, scale float32) float64 {
		sums := make([]float64, 2*m)
		x := make([]float32, m)
		out := make([]float32, 2*m)
		for k := range m {
			clear(x)
			x[k] = 1
			t.run(x, out, scale)
			for n, v := range out {
				sums[n] += math.Abs(float64(v))
			}
		}
		most := 0.0
		for _, v := range sums {
			most = max(most, v)
		}
		return most
	}
	long := rows(d.long, 1024, outScale/1024)
	short := rows(d.short, 128, outScale/128)
	gain := long + max(long, 2*short)
	legal := legalSpec()
	t.Logf("a full-scale input gives at most %.3g; specBound is %.0f times that", legal, specBound/legal)
	t.Logf("gains per unit: long %.3g, short %.3g; worst %.3g; at specBound %.3g of the bound %.3g", long, short, gain, specBound*gain, float64(pcmBound))
	if specBound < 256*legal {
		t.Errorf("specBound leaves less than 256 times the largest legal value %.3g", legal)
	}
	if specBound*gain > pcmBound/2 {
		t.Errorf("specBound times the worst-case gain is %.3g, not well below %g", specBound*gain, float64(pcmBound))
	}
}

// ffmpeg's encodings of signals at full scale keep every frame and stay
// below the most a full-scale input can give: sines low and high, a
// square wave, white noise, channels in opposite phase, clicks beyond
// full scale (clipped), each with the encoder's TNS, intensity stereo and
// noise substitution on.
func TestLegalLevelsStayBelowTheBound(t *testing.T) {
	dir := t.TempDir()
	var cases []aactest.Case
	for _, s := range []struct{ name, src string }{
		{"sine-1k", "aevalsrc=sin(2*PI*1000*t)|sin(2*PI*1000*t)"},
		{"sine-12k", "aevalsrc=sin(2*PI*12000*t)|sin(2*PI*12000*t)"},
		{"square-110", "aevalsrc=if(gt(sin(2*PI*110*t)\\,0)\\,1\\,-1)|if(gt(sin(2*PI*110*t)\\,0)\\,1\\,-1)"},
		{"noise", "anoisesrc=c=white:a=1,asplit[a][b];[b]adelay=3[c];[a][c]join=inputs=2:channel_layout=stereo"},
		{"opposite", "aevalsrc=sin(2*PI*440*t)|-sin(2*PI*440*t)"},
		{"clicks", "aevalsrc=lt(mod(t\\,0.25)\\,0.002)*sin(2*PI*3000*t)*1.5|lt(mod(t\\,0.25)\\,0.002)"},
	} {
		for _, e := range []struct {
			name           string
			rate, channels int
			bitrate        string
			enc            []string
		}{
			{"44k-256k", 44100, 2, "256k", []string{"-aac_tns", "1"}},
			{"44k-64k-is", 44100, 2, "64k", []string{"-aac_is", "1", "-aac_ms", "0"}},
			{"22k-48k-pns", 22050, 2, "48k", []string{"-aac_pns", "1"}},
			{"8k-mono", 8000, 1, "32k", nil},
		} {
			if e.channels == 1 && s.name != "square-110" {
				continue // one mono case: the others fold to 0 or lie above 4 kHz
			}
			src := s.src
			if !strings.Contains(src, ":s=") && strings.HasPrefix(src, "aevalsrc") {
				src += fmt.Sprintf(":s=%d", e.rate)
			}
			cases = append(cases, aactest.Case{Name: s.name + "-" + e.name, Source: src, Rate: e.rate, Channels: e.channels, Bitrate: e.bitrate, Encoder: e.enc, Seconds: 0.5})
		}
	}
	legal := legalSpec()
	var loudest float32
	for _, c := range cases {
		path, _ := aactest.Make(t, dir, c, ".aac")
		_, stats := decodeADTSFile(t, path)
		t.Logf("%-24s largest spectral value %.3g (%.2f of the most full scale gives), tools %v", c.Name, stats.loudest, float64(stats.loudest)/legal, stats)
		if stats.refused != 0 {
			t.Errorf("%s: %d channel frames refused", c.Name, stats.refused)
		}
		loudest = max(loudest, stats.loudest)
	}
	t.Logf("largest spectral value of all %.3g, 1/%.0f of specBound", loudest, specBound/loudest)
	if float64(loudest) > legal {
		t.Errorf("largest spectral value %.3g, beyond %.3g, the most an input within full scale gives", loudest, legal)
	}
}
