package loudness

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// programme is a stereo signal of rate Hz that moves like speech or music:
// noise under a slowly wandering level (about ±levelSpread dB around
// level dBFS) with pauses.
func programme(seed uint64, rate int, seconds, level, levelSpread float64) [][2]float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([][2]float64, int(seconds*float64(rate)))
	gain, target := 0.0, 0.0
	var lp1, lp2 float64
	for i := range x {
		if i%(rate/4) == 0 {
			target = level + (r.Float64()*2-1)*levelSpread
			if r.IntN(12) == 0 {
				target = -90 // a pause
			}
		}
		gain += (target - gain) * 0.0005
		a := math.Pow(10, gain/20)
		lp1 += 0.3 * (r.NormFloat64() - lp1)
		lp2 += 0.3 * (r.NormFloat64() - lp2)
		x[i] = [2]float64{a * lp1, a * (0.7*lp1 + 0.3*lp2)}
	}
	return x
}

func measure(t *testing.T, rate int, x [][2]float64) Result {
	t.Helper()
	m, err := NewMeter(rate, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(x); i += 1000 {
		m.Write(x[i:min(i+1000, len(x))])
	}
	return m.Result()
}

// TestCombineMatchesOneMeter: a folder's loudness from its tracks' stored
// histograms is the loudness of the tracks played as one programme, to
// the histogram's bound (Histogram) — not the mean of the tracks' values,
// which the quiet track here would pull far off.
func TestCombineMatchesOneMeter(t *testing.T) {
	const rate = 44100
	tracks := [][][2]float64{
		programme(1, rate, 20, -20, 6),
		programme(2, rate, 12, -32, 4), // a quiet interlude
		programme(3, rate, 30, -16, 10),
	}
	var rs []Result
	var all [][2]float64
	var mean float64
	for _, x := range tracks {
		r := measure(t, rate, x)
		// Through storage, as the library keeps it.
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("stored %+v, read back %+v", r, back)
		}
		rs = append(rs, back)
		all = append(all, x...)
		mean += r.Integrated / float64(len(tracks))
	}
	whole := measure(t, rate, all)
	got := Combine(rs...)
	if d := got.Integrated - whole.Integrated; math.Abs(d) > 0.05 {
		t.Errorf("combined %.3f LUFS, one meter over all %.3f LUFS", got.Integrated, whole.Integrated)
	}
	if d := got.Range - whole.Range; math.Abs(d) > 0.5 {
		t.Errorf("combined range %.2f LU, one meter %.2f LU", got.Range, whole.Range)
	}
	if got.TruePeak != max(rs[0].TruePeak, rs[1].TruePeak, rs[2].TruePeak) || math.Abs(got.Duration-whole.Duration) > 1e-9 {
		t.Errorf("combined peak %.2f, duration %.3f; whole %.2f, %.3f", got.TruePeak, got.Duration, whole.TruePeak, whole.Duration)
	}
	if math.Abs(mean-whole.Integrated) < 0.5 {
		t.Errorf("the tracks' mean %.2f is already close to the whole %.2f: the test cannot tell gating from averaging", mean, whole.Integrated)
	}
	// Each track's own value from its histogram alone is within the bound too.
	for i, r := range rs {
		if d := Combine(r).Integrated - r.Integrated; math.Abs(d) > 0.05 {
			t.Errorf("track %d: from histogram %.3f, exact %.3f", i, Combine(r).Integrated, r.Integrated)
		}
	}
}

// TestHistogramRejectsDamage: a stored histogram that was cut or tampered
// with is an error, not a wrong loudness.
func TestHistogramRejectsDamage(t *testing.T) {
	for _, s := range []string{`"!!"`, `""`, `"AQ"`, `12`, `"` + "/////////w" + `"`} {
		var h Histogram
		if err := json.Unmarshal([]byte(s), &h); err == nil {
			t.Errorf("%s read as %+v", s, h)
		}
	}
	var h Histogram
	if err := json.Unmarshal([]byte(`"AAA"`), &h); err != nil || h.Count() != 0 {
		t.Errorf("empty histogram: %v, %+v", err, h)
	}
}
