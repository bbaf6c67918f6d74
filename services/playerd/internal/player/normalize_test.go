package player

import (
	"math"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/library"
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

type fakeLevels struct {
	tracks  map[string]Level
	folders map[string]Level
}

func (f fakeLevels) Track(t library.Track) (Level, bool) { l, ok := f.tracks[t.Path]; return l, ok }
func (f fakeLevels) Folder(x library.Folder) (Level, bool) {
	l, ok := f.folders[x.ID]
	return l, ok
}

func TestChoose(t *testing.T) {
	album := library.Folder{ID: "album", Tracks: []library.Track{{Path: "loud"}, {Path: "quiet"}, {Path: "short"}}}
	half := library.Folder{ID: "half", Tracks: []library.Track{{Path: "loud"}, {Path: "new"}}}
	lv := fakeLevels{
		tracks: map[string]Level{
			"loud":  {-9, -2},
			"quiet": {-19, -12},
			"short": {math.Inf(-1), -3}, // under 400 ms: no loudness, only a peak
		},
		folders: map[string]Level{"album": {-10.5, -2}},
	}
	for _, c := range []struct {
		name    string
		mode    string
		f       library.Folder
		t       string
		mono    bool
		by      string
		gain    float64
		lufsNil bool
	}{
		{"folder: the loudest track at the target", NormalizeFolder, album, "quiet", false, ByFolder, -9, false},
		{"folder: the same gain for every track", NormalizeFolder, album, "loud", false, ByFolder, -9, false},
		{"folder: a short track has the folder's gain", NormalizeFolder, album, "short", false, ByFolder, -9, false},
		{"folder not measured whole: the track's own", NormalizeFolder, half, "loud", false, ByTrack, -9, false},
		{"folder not measured whole, track neither", NormalizeFolder, half, "new", false, ByUnmeasured, TargetLUFS - UnmeasuredLUFS, true},
		{"track mode", NormalizeTrack, album, "quiet", false, ByTrack, 1, false},
		{"track mode: mono heard on both sides", NormalizeTrack, album, "quiet", true, ByTrack, 1 - monoDB, false},
		{"track mode: under 400 ms", NormalizeTrack, album, "short", false, ByTrack, TargetLUFS - UnmeasuredLUFS, true},
		{"off", NormalizeOff, album, "loud", false, ByOff, 0, true},
	} {
		n := Choose(c.mode, lv, c.f, library.Track{Path: c.t}, c.mono)
		if n.By != c.by || math.Abs(n.GainDB-c.gain) > 1e-9 || (n.LUFS == nil) != c.lufsNil {
			t.Errorf("%s: %+v, want by %s, gain %v, lufs nil %v", c.name, n, c.by, c.gain, c.lufsNil)
		}
	}
	if n := Choose(NormalizeTrack, nil, album, library.Track{Path: "loud"}, false); n.By != ByUnmeasured {
		t.Errorf("nothing measured: %+v", n)
	}
}
