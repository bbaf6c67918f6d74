package player

import (
	"math"

	"github.com/storybox/storybox/services/playerd/internal/loudness"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

// A station or a streamed episode cannot be measured before it plays. The
// leveller brings it to the target as it plays: it follows the stream's
// short-term loudness (the 3 s window of EBU R128) with a slow attack and a
// slower release, so speech and music keep their dynamics within seconds
// and only the level of the whole moves.
const (
	levAttack  = 1.0  // s: time constant of lowering the gain
	levRelease = 2.5  // s: time constant of raising it
	levGateDB  = -50. // LUFS: quieter windows (pauses, silence) hold the gain
	levMinDB   = -30.0
	levMaxDB   = 12.0
	levMinSecs = 0.4 // the first estimate waits for one gating block
)

// leveller is one stream's automatic gain.
type leveller struct {
	meter  *loudness.Meter
	gainDB float64
	rate   int
	peak   peakWindow
}

func newLeveller(rate int) *leveller {
	return &leveller{
		meter: newMeter(rate),
		// Until the first estimate, a stream is taken to be as loud as
		// an unmeasured file.
		gainDB: TargetLUFS - UnmeasuredLUFS,
		rate:   rate,
		peak:   newPeakWindow(rate),
	}
}

// add measures frames as they are rendered and moves the gain by the time
// they last.
func (l *leveller) add(frames [][2]float64) {
	if len(frames) == 0 {
		return
	}
	l.meter.Write(frames)
	l.peak.add(frames)
	if l.meter.Seconds() < levMinSecs {
		return
	}
	s := l.meter.ShortTerm()
	if s < levGateDB {
		return
	}
	want := max(levMinDB, min(TargetLUFS-s, levMaxDB))
	// The sample peaks of the last seconds bound the gain as a measured
	// true peak bounds a file's. It is a leveller, not a limiter: a peak
	// after a quiet passage can pass the ceiling before the gain has come
	// down, by at most the gain it rose in that passage.
	if pk := l.peak.dB(); !math.IsInf(pk, -1) {
		want = min(want, CeilingDBTP-pk)
	}
	tau := levRelease
	if want < l.gainDB {
		tau = levAttack
	}
	dt := float64(len(frames)) / float64(l.rate)
	l.gainDB += (want - l.gainDB) * (1 - math.Exp(-dt/tau))
}

// retarget measures at another rate from now on, keeping the gain.
func (l *leveller) retarget(rate int) {
	l.meter, l.peak, l.rate = newMeter(rate), newPeakWindow(rate), rate
}

// newMeter measures the stereo output: a mono station is heard on both
// sides and counted so.
func newMeter(rate int) *loudness.Meter {
	m, err := loudness.NewMeter(rate, 2)
	if err != nil { // output rates are all far above what it refuses
		panic(err)
	}
	return m
}

// peakWindow is the highest sample magnitude of about the last 3 s, kept
// per output period.
type peakWindow struct {
	peaks []float64
	next  int
}

func newPeakWindow(rate int) peakWindow {
	return peakWindow{peaks: make([]float64, max(1, 3*rate/output.PeriodFrames))}
}

func (w *peakWindow) add(frames [][2]float64) {
	var m float64
	for _, f := range frames {
		// Comparisons, not the builtin max: its care for NaN (which the
		// decoders' guard has made silence) costs more than the rest.
		if a := math.Abs(f[0]); a > m {
			m = a
		}
		if a := math.Abs(f[1]); a > m {
			m = a
		}
	}
	w.peaks[w.next] = m
	w.next = (w.next + 1) % len(w.peaks)
}

func (w *peakWindow) dB() float64 {
	var m float64
	for _, p := range w.peaks {
		m = max(m, p)
	}
	return 20 * math.Log10(m)
}
