package battery

import (
	"math"
	"slices"
)

// Level is the battery level playerd acts on.
type Level string

// Levels; the empty Level means not yet known.
const (
	LevelOK       Level = "ok"
	LevelLow      Level = "low"
	LevelCritical Level = "critical"
)

// Sample is one charger reading as the estimator needs it.
type Sample struct {
	// Valid is false when the charger could not be read.
	Valid          bool
	BatteryPresent bool
	VBATmV         int
	IBATmA         int // positive while charging
	Charging       bool
	ChargeDone     bool
	ExternalPower  bool
}

// Estimate is the estimator's published result.
type Estimate struct {
	// Percent is meaningful only when PercentKnown.
	Percent      int
	PercentKnown bool
	// Level is empty until confirmed by enough plausible samples.
	Level Level
	// RestingMV is the smoothed, load-corrected pack voltage behind both.
	RestingMV int
}

// Options tune the estimator. Zero values mean the defaults in
// DefaultOptions.
type Options struct {
	// Window is the number of samples whose median smooths the voltage.
	Window int
	// HysteresisPct is the change needed before the percentage moves in
	// the expected direction (down on battery, up while charging).
	HysteresisPct int
	// ReversePct is the change needed against the expected direction.
	ReversePct int
	// MaxStepPct caps how far the percentage moves per sample.
	MaxStepPct int
	// Confirm is the number of consecutive plausible samples that must
	// agree before the level changes.
	Confirm int
	// RecoverMV is how far above a threshold the voltage must rise before
	// a level is left again.
	RecoverMV int
	// MaxCorrectionMV caps the load correction, so a wrong resistance or a
	// current glitch cannot hide a flat pack.
	MaxCorrectionMV int
}

// DefaultOptions suit a sample every few seconds.
var DefaultOptions = Options{
	Window: 5, HysteresisPct: 2, ReversePct: 10, MaxStepPct: 5,
	Confirm: 3, RecoverMV: 150, MaxCorrectionMV: 300,
}

// emaWeight is the weight of a new median in the moving average.
const emaWeight = 0.3

// Estimator turns samples into an Estimate. It is not safe for concurrent
// use; one sampling loop owns it.
type Estimator struct {
	p       Profile
	o       Options
	window  []int
	est     Estimate
	percent float64
	smooth  float64
	pending Level
	count   int
}

// NewEstimator starts with nothing known. The profile must be valid.
func NewEstimator(p Profile, o Options) *Estimator {
	d := DefaultOptions
	if o.Window <= 0 {
		o.Window = d.Window
	}
	if o.HysteresisPct <= 0 {
		o.HysteresisPct = d.HysteresisPct
	}
	if o.ReversePct <= 0 {
		o.ReversePct = d.ReversePct
	}
	if o.MaxStepPct <= 0 {
		o.MaxStepPct = d.MaxStepPct
	}
	if o.Confirm <= 0 {
		o.Confirm = d.Confirm
	}
	if o.RecoverMV <= 0 {
		o.RecoverMV = d.RecoverMV
	}
	if o.MaxCorrectionMV <= 0 {
		o.MaxCorrectionMV = d.MaxCorrectionMV
	}
	e := &Estimator{p: p, o: o}
	if p.NoBattery {
		e.est.Level = LevelOK
	}
	return e
}

// Profile returns the profile in use.
func (e *Estimator) Profile() Profile { return e.p }

// Estimate returns the current result.
func (e *Estimator) Estimate() Estimate { return e.est }

// plausible rejects readings that cannot be a connected pack of this
// profile: a missing battery, a dead ADC (0 mV) or a value past the
// charge limit.
func (e *Estimator) plausible(s Sample) bool {
	if !s.Valid || !s.BatteryPresent {
		return false
	}
	lo := e.p.Cells * 2000
	hi := e.p.ChargeVoltageMV + e.p.Cells*100
	return s.VBATmV >= lo && s.VBATmV <= hi
}

// Update feeds one sample and returns the new estimate. Implausible samples
// are ignored: they neither move the estimate nor count towards confirming
// a level, so only plausible readings can lead to a shutdown.
func (e *Estimator) Update(s Sample) Estimate {
	if e.p.NoBattery || !e.plausible(s) {
		return e.est
	}
	corr := s.IBATmA * e.p.InternalResistanceMilliohm / 1000
	corr = max(-e.o.MaxCorrectionMV, min(e.o.MaxCorrectionMV, corr))
	rest := s.VBATmV - corr

	e.window = append(e.window, rest)
	if len(e.window) > e.o.Window {
		e.window = e.window[1:]
	}
	// Until the window is full, a couple of spikes could be its median:
	// publish nothing yet.
	if len(e.window) < e.o.Window {
		return e.est
	}
	// The median drops short load spikes and wild readings; the moving
	// average then calms ADC noise.
	m := float64(median(e.window))
	if e.smooth == 0 {
		e.smooth = m
	}
	e.smooth += emaWeight * (m - e.smooth)
	smooth := int(math.Round(e.smooth))
	e.est.RestingMV = smooth

	raw := e.p.Percent(float64(smooth))
	if s.ChargeDone {
		raw = 100
	}
	e.updatePercent(raw, s.Charging || s.ChargeDone)
	e.updateLevel(smooth, s.ExternalPower)
	return e.est
}

func (e *Estimator) updatePercent(raw float64, charging bool) {
	if !e.est.PercentKnown {
		e.percent = raw
		e.est.PercentKnown = true
		e.est.Percent = int(math.Round(raw))
		return
	}
	diff := raw - e.percent
	need := float64(e.o.HysteresisPct)
	if (diff > 0) != charging {
		need = float64(e.o.ReversePct)
	}
	// The ends of the scale are reached without hysteresis, so a full or
	// empty pack reads 100 or 0 rather than 99 or 1.
	if math.Abs(diff) < need && raw != 0 && raw != 100 {
		return
	}
	step := float64(e.o.MaxStepPct)
	e.percent += max(-step, min(step, diff))
	e.est.Percent = int(math.Round(e.percent))
}

func (e *Estimator) updateLevel(mv int, external bool) {
	cand := LevelOK
	if !external {
		crit, low := e.p.ShutdownMV, e.p.WarningMV
		if e.est.Level == LevelCritical {
			crit += e.o.RecoverMV
		}
		if e.est.Level == LevelLow || e.est.Level == LevelCritical {
			low += e.o.RecoverMV
		}
		switch {
		case mv < crit:
			cand = LevelCritical
		case mv < low:
			cand = LevelLow
		}
	}
	if cand == e.est.Level {
		e.pending, e.count = "", 0
		return
	}
	if cand != e.pending {
		e.pending, e.count = cand, 0
	}
	e.count++
	if e.count >= e.o.Confirm {
		e.est.Level = cand
		e.pending, e.count = "", 0
	}
}

func median(v []int) int {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
