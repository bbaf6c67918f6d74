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

// The folder mode plays a folder at one gain: the join between its tracks
// stays sample-exact, every frame the file's times that one gain.
func TestFolderModeKeepsGaplessJoinsExact(t *testing.T) {
	sink := &recSink{}
	f := folderOf(t, "f", 0.3, 0.2)
	lv := fakeLevels{
		tracks:  map[string]Level{f.Tracks[0].Path: {-24, -20}, f.Tracks[1].Path: {-27, -20}},
		folders: map[string]Level{"f": {-25, -20}},
	}
	h := newHarness(t, catalog{"f": f}, Config{Normalize: NormalizeFolder, Levels: lv}, sink)
	st := h.do(Command{Action: ActFolder, FolderID: "f"})
	if n := st.Normalize; n == nil || n.By != ByFolder || n.GainDB != 6 || n.LUFS == nil || *n.LUFS != -25 {
		t.Errorf("status normalize %+v, want the folder's −25 LUFS and its loudest track brought to the target (+6 dB)", n)
	}
	h.waitFor("end of queue", func(s Status) bool { return s.State == Stopped })
	heard := sink.heard()
	if len(heard) != 24000 {
		t.Fatalf("heard %d frames, want exactly 24000 (0.3 s + 0.2 s)", len(heard))
	}
	g := dbToGain(6)
	for i := rampFrames; i < len(heard); i++ {
		want, n := 1000.0/32768*g, i
		if i >= 14400 {
			want, n = 2000.0/32768*g, i-14400
		}
		if math.Abs(heard[i][0]-want) > 1e-12 || int(math.Round(heard[i][1]/g*32768/30))%1000 != n%1000 {
			t.Fatalf("frame %d = %v, want level %v sample %d", i, heard[i], want, n%1000)
		}
	}
}
