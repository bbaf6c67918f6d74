package player

import (
	"math"
	"testing"
)

func TestGainForBringsToTheTargetUnderTheCeiling(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(-1)
	for _, c := range []struct {
		name string
		l    Level
		want float64
	}{
		{"loud master comes down", Level{-7, -0.1}, -11},
		{"at the target stays", Level{-18, -3}, 0},
		{"quiet master comes up", Level{-28, -12}, 10},
		{"quiet master with loud peaks is bounded by them", Level{-28, -4}, 3},
		{"very quiet is bounded by the largest boost", Level{-60, -50}, maxBoostDB},
		{"silence (no gated block): the unmeasured gain", Level{nan, inf}, TargetLUFS - UnmeasuredLUFS},
		{"under 400 ms at full scale: the unmeasured gain", Level{inf, 0}, TargetLUFS - UnmeasuredLUFS},
		{"not measured", Level{nan, nan}, TargetLUFS - UnmeasuredLUFS},
	} {
		if got := GainFor(c.l); math.Abs(got-c.want) > 1e-9 || math.IsNaN(got) || math.IsInf(got, 0) {
			t.Errorf("%s: GainFor(%+v) = %v dB, want %v", c.name, c.l, got, c.want)
		}
	}
}

// The cap's loudness follows the volume curve: 0.4 dB a step below the
// target at 100.
func TestOutputLUFSFollowsTheVolumeCurve(t *testing.T) {
	for v, want := range map[int]float64{100: -18, 80: -26, 60: -34, 1: -57.6} {
		if got := OutputLUFS(v); math.Abs(got-want) > 1e-9 {
			t.Errorf("OutputLUFS(%d) = %v, want %v", v, got, want)
		}
		if got, g := OutputLUFS(v), 20*math.Log10(gainFor(v)); math.Abs(got-TargetLUFS-g) > 1e-9 {
			t.Errorf("OutputLUFS(%d) = %v is not the target lowered by the volume's gain %v dB", v, got, g)
		}
	}
	if !math.IsInf(OutputLUFS(0), -1) {
		t.Error("volume 0 is silence")
	}
}
