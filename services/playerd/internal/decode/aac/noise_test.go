package aac

import (
	"math"
	"testing"
)

// A noise band carries the energy its noise_nrg codes, gain² with gain =
// 2^(noise_nrg/4), to within float32 rounding (a relative 1e-5 here), at
// every band width and over the whole range of energies a frame may code.
func TestNoiseEnergy(t *testing.T) {
	d, err := NewDecoder(Config{ObjectType: 2, RateIndex: 4, SampleRate: 44100, Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{4, 8, 16, 32, 96} {
		for _, nrg := range []int{-100, -17, 0, 1, 60, 155} {
			band := make([]float32, width)
			gain := float32(math.Exp2(float64(nrg) / 4))
			d.noise(band, gain)
			var e float64
			for _, v := range band {
				e += float64(v) * float64(v)
			}
			want := float64(gain) * float64(gain)
			if math.Abs(e/want-1) > 1e-5 {
				t.Errorf("width %d, noise_nrg %d: energy %g, want %g", width, nrg, e, want)
			}
		}
	}
}

// The noise generator's values have about zero mean and are not all alike.
func TestNoiseValues(t *testing.T) {
	d, err := NewDecoder(Config{ObjectType: 2, RateIndex: 4, SampleRate: 44100, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	band := make([]float32, 1<<16)
	d.noise(band, 1)
	var sum float64
	distinct := map[float32]bool{}
	for _, v := range band {
		sum += float64(v)
		distinct[v] = true
	}
	// Each value is about 1/256 in size; the mean of 65536 of them is
	// within 1/256/256·4 if they are centred.
	if mean := sum / float64(len(band)); math.Abs(mean) > 4.0/256/256 {
		t.Errorf("mean %g", mean)
	}
	if len(distinct) < len(band)*99/100 {
		t.Errorf("%d distinct values of %d", len(distinct), len(band))
	}
}

// In a channel pair whose bands are noise in both channels, the noise is
// independent unless mid/side is on for the band (4.6.13.3): then the
// right channel has the left's noise at its own energy.
func TestNoisePair(t *testing.T) {
	for _, msMask := range []int{0, 2} {
		d, err := NewDecoder(Config{ObjectType: 2, RateIndex: 4, SampleRate: 44100, Channels: 2})
		if err != nil {
			t.Fatal(err)
		}
		l, r := &d.ch[0], &d.ch[1]
		for i, c := range []*channel{l, r} {
			c.ics.info = icsInfo{maxSfb: 40, numWindows: 1, numGroups: 1, groupLen: [8]int{1}, swb: bands[4].long, numSwb: 49}
			for k := range 40 {
				c.ics.cb[0][k] = noiseHCB
				c.ics.sf[0][k] = 20 + 4*i // right 2× the left's amplitude
			}
			if err := d.readSpectrum(&bitReader{}, &c.ics, &c.spec); err != nil {
				t.Fatal(err)
			}
		}
		var ms [8][maxBands]bool
		d.stereo(l, r, msMask, &ms)
		for k := range 40 {
			lo, hi := int(bands[4].long[k]), int(bands[4].long[k+1])
			var ll, rr, lr float64
			for i := lo; i < hi; i++ {
				a, b := float64(l.spec[i]), float64(r.spec[i])
				ll += a * a
				rr += b * b
				lr += a * b
			}
			if math.Abs(ll/1024-1) > 1e-4 || math.Abs(rr/4096-1) > 1e-4 {
				t.Fatalf("ms_mask %d band %d: energies %g and %g, want 1024 and 4096", msMask, k, ll, rr)
			}
			corr := lr / math.Sqrt(ll*rr)
			switch {
			case msMask == 2 && corr < 1-1e-5:
				t.Errorf("band %d with mid/side: correlation %g, want the same noise", k, corr)
			case msMask == 0 && hi-lo >= 16 && math.Abs(corr) > 0.9:
				t.Errorf("band %d without mid/side: correlation %g, want independent noise", k, corr)
			case msMask == 0 && r.spec[lo] == 2*l.spec[lo]:
				t.Errorf("band %d without mid/side: the right channel is the left's", k)
			}
		}
	}
}
