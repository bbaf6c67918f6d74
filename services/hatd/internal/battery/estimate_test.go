package battery

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func mustLookup(t *testing.T, name string) Profile {
	t.Helper()
	p, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// trace runs samples through a fresh estimator and returns every estimate.
func trace(p Profile, samples []Sample) []Estimate {
	e := NewEstimator(p, Options{})
	out := make([]Estimate, len(samples))
	for i, s := range samples {
		out[i] = e.Update(s)
	}
	return out
}

// onBattery builds a discharging sample whose terminal voltage is the
// resting voltage minus the drop over the pack's resistance.
func onBattery(p Profile, restMV, loadMA int) Sample {
	return Sample{Valid: true, BatteryPresent: true, VBATmV: restMV - loadMA*p.InternalResistanceMilliohm/1000, IBATmA: -loadMA}
}

// levelChanges lists the distinct consecutive levels of a trace.
func levelChanges(est []Estimate) []Level {
	var out []Level
	for _, e := range est {
		if len(out) == 0 || out[len(out)-1] != e.Level {
			out = append(out, e.Level)
		}
	}
	return out
}

// maxJump returns the largest change of the percentage between samples and
// whether it ever moved up or down.
func maxJump(est []Estimate) (jump int, up, down bool) {
	for i := 1; i < len(est); i++ {
		if !est[i-1].PercentKnown {
			continue
		}
		d := est[i].Percent - est[i-1].Percent
		if d > 0 {
			up = true
		}
		if d < 0 {
			down = true
		}
		jump = max(jump, d, -d)
	}
	return jump, up, down
}

func TestSteadyDischarge(t *testing.T) {
	p := mustLookup(t, "ansmann-2s1p")
	rng := rand.New(rand.NewPCG(1, 2))
	var s []Sample
	// 8100 mV to 6600 mV in 1 mV steps at 600 mA, ±10 mV ADC noise.
	for mv := 8100; mv >= 6600; mv-- {
		s = append(s, onBattery(p, mv+rng.IntN(21)-10, 600))
	}
	est := trace(p, s)
	jump, up, _ := maxJump(est)
	if up {
		t.Error("percentage rose while discharging")
	}
	if jump > DefaultOptions.HysteresisPct+1 {
		t.Errorf("largest step %d %%, hysteresis %d %%", jump, DefaultOptions.HysteresisPct)
	}
	first := est[DefaultOptions.Window-1]
	if !first.PercentKnown || est[DefaultOptions.Window-2].PercentKnown {
		t.Errorf("percentage known from sample %d, want %d", 0, DefaultOptions.Window-1)
	}
	if first.Percent != 100 || est[len(est)-1].Percent != 0 {
		t.Errorf("from %d %% to %d %%", first.Percent, est[len(est)-1].Percent)
	}
	got := levelChanges(est)
	want := []Level{"", LevelOK, LevelLow, LevelCritical}
	if strings.Join(levelStrings(got), ",") != strings.Join(levelStrings(want), ",") {
		t.Fatalf("levels %v, want %v", got, want)
	}
	// Low must come soon after the resting voltage crosses 7000 mV, not
	// before: index i is at 8100-i mV.
	for i, e := range est {
		if e.Level == LevelLow {
			if mv := 8100 - i; mv > 7000 || mv < 7000-15 {
				t.Errorf("low at %d mV", mv)
			}
			break
		}
	}
	for i, e := range est {
		if e.Level == LevelCritical {
			if mv := 8100 - i; mv > 6800 || mv < 6800-15 {
				t.Errorf("critical at %d mV", mv)
			}
			break
		}
	}
	// At the table's points the estimate is close to the table.
	for _, pt := range []struct{ mv, pct int }{{7800, 75}, {7400, 50}, {7000, 25}} {
		if got := est[8100-pt.mv].Percent; got > pt.pct+3 || got < pt.pct-3 {
			t.Errorf("at %d mV: %d %%, want about %d %%", pt.mv, got, pt.pct)
		}
	}
}

func levelStrings(l []Level) []string {
	var s []string
	for _, x := range l {
		s = append(s, string(x))
	}
	return s
}

func TestLoadSpikesDoNotMoveTheEstimate(t *testing.T) {
	p := mustLookup(t, "ansmann-2s1p")
	var s []Sample
	for i := range 400 {
		load := 400
		switch {
		case i%25 == 10 || i%25 == 11:
			load = 3500 // amplifier peak: 525 mV drop, more than the correction covers
		case i >= 200 && i < 300:
			load = 1500 // loud playback for a while
		}
		s = append(s, onBattery(p, 7400, load))
	}
	est := trace(p, s)
	if jump, _, _ := maxJump(est); jump != 0 {
		t.Errorf("percentage moved by %d %% under load spikes", jump)
	}
	if got := levelChanges(est); len(got) != 2 || got[1] != LevelOK {
		t.Errorf("levels %v", got)
	}
}

func TestSpikeNearThresholdDoesNotShutDown(t *testing.T) {
	p := mustLookup(t, "ansmann-2s1p")
	var s []Sample
	for i := range 200 {
		load := 500
		if i%10 < 2 {
			load = 4000 // terminal voltage 6.2 V for two samples
		}
		s = append(s, onBattery(p, 6850, load))
	}
	for _, e := range trace(p, s) {
		if e.Level == LevelCritical {
			t.Fatal("short load spikes at 6850 mV resting reached critical")
		}
	}
}

func TestCharging(t *testing.T) {
	p := mustLookup(t, "ansmann-2s1p")
	var s []Sample
	// Discharging at 7300 mV resting, then plugged in: constant current
	// 1500 mA raises the terminal voltage by 225 mV at once, the resting
	// voltage climbs to 8.4 V, then constant voltage with falling current,
	// then termination.
	for range 20 {
		s = append(s, onBattery(p, 7300, 500))
	}
	for rest := 7300; rest < 8250; rest += 2 {
		s = append(s, Sample{Valid: true, BatteryPresent: true, ExternalPower: true, Charging: true,
			VBATmV: rest + 1500*p.InternalResistanceMilliohm/1000, IBATmA: 1500})
	}
	for ma := 1000; ma > 100; ma -= 20 {
		s = append(s, Sample{Valid: true, BatteryPresent: true, ExternalPower: true, Charging: true,
			VBATmV: 8400, IBATmA: ma})
	}
	for range 30 {
		s = append(s, Sample{Valid: true, BatteryPresent: true, ExternalPower: true, ChargeDone: true, VBATmV: 8380})
	}
	est := trace(p, s)
	plug := 20
	for i := plug + 1; i < len(est); i++ {
		if est[i-1].PercentKnown && est[i].Percent < est[i-1].Percent {
			t.Fatalf("sample %d: percentage fell from %d to %d while charging", i, est[i-1].Percent, est[i].Percent)
		}
		if d := est[i].Percent - est[i-1].Percent; d > DefaultOptions.MaxStepPct {
			t.Fatalf("sample %d: jumped %d %%", i, d)
		}
	}
	if d := est[plug+3].Percent - est[plug-1].Percent; d > DefaultOptions.HysteresisPct {
		t.Errorf("plugging in raised the estimate by %d %%", d)
	}
	if last := est[len(est)-1]; last.Percent != 100 || last.Level != LevelOK {
		t.Errorf("after termination: %+v", last)
	}
}

func TestNoisySensor(t *testing.T) {
	p := mustLookup(t, "enerpower-2s2p-10ah")
	rng := rand.New(rand.NewPCG(7, 7))
	var s []Sample
	rest := 7600.0
	for range 3000 {
		rest -= 0.3
		noise := int(rng.NormFloat64() * 40)
		if rng.IntN(50) == 0 {
			noise = rng.IntN(1200) - 600 // occasional wild reading
		}
		s = append(s, onBattery(p, int(rest)+noise, 300))
	}
	est := trace(p, s)
	jump, up, down := maxJump(est)
	if up {
		t.Error("percentage rose while discharging")
	}
	if !down {
		t.Error("percentage never fell")
	}
	if jump > DefaultOptions.HysteresisPct+1 {
		t.Errorf("largest step %d %%", jump)
	}
	// rest ends near 6700 mV: above warning (6500), so never low.
	for _, l := range levelChanges(est) {
		if l != "" && l != LevelOK {
			t.Errorf("level %s on a noisy but healthy pack", l)
		}
	}
}

func TestLevelHysteresisAtThreshold(t *testing.T) {
	p := mustLookup(t, "ansmann-2s1p")
	var s []Sample
	for i := range 300 {
		mv := 6990
		if i%20 >= 10 {
			mv = 7060 // load relief: back above the warning threshold
		}
		if i < 10 {
			mv = 7500
		}
		s = append(s, onBattery(p, mv, 0))
	}
	got := levelChanges(trace(p, s))
	want := []Level{"", LevelOK, LevelLow}
	if strings.Join(levelStrings(got), ",") != strings.Join(levelStrings(want), ",") {
		t.Errorf("levels %v, want %v (no flapping)", got, want)
	}
	// Recovery: charged well above the threshold, back to ok.
	e := NewEstimator(p, Options{})
	for range 10 {
		e.Update(onBattery(p, 6990, 0))
	}
	for range 10 {
		e.Update(onBattery(p, 7300, 0))
	}
	if l := e.Estimate().Level; l != LevelOK {
		t.Errorf("after recovery: %s", l)
	}
}

func TestBadReadingsNeverShutDown(t *testing.T) {
	p := mustLookup(t, "ansmann-2s1p")
	e := NewEstimator(p, Options{})
	for range 10 {
		e.Update(onBattery(p, 7600, 400))
	}
	bad := []Sample{
		{},                          // bus error
		{Valid: true, VBATmV: 6000}, // VBAT_PRESENT clear
		{Valid: true, BatteryPresent: true, VBATmV: 0},     // ADC not running
		{Valid: true, BatteryPresent: true, VBATmV: 3000},  // one cell missing
		{Valid: true, BatteryPresent: true, VBATmV: 65535}, // garbage
	}
	for range 50 {
		for _, b := range bad {
			got := e.Update(b)
			if got.Level != LevelOK || got.Percent < 60 {
				t.Fatalf("bad reading %+v moved the estimate: %+v", b, got)
			}
		}
	}
	// Bad readings between genuinely critical ones do not block the
	// shutdown either.
	for range 12 {
		e.Update(onBattery(p, 6700, 400))
		e.Update(Sample{})
	}
	if l := e.Estimate().Level; l != LevelCritical {
		t.Errorf("level %s, want critical", l)
	}
}

func TestExternalPowerPreventsShutdown(t *testing.T) {
	p := mustLookup(t, "ansmann-2s1p")
	e := NewEstimator(p, Options{})
	for range 20 {
		e.Update(Sample{Valid: true, BatteryPresent: true, ExternalPower: true, VBATmV: 6600, IBATmA: -100})
	}
	if l := e.Estimate().Level; l != LevelOK {
		t.Errorf("level %s on external power", l)
	}
	for range 10 {
		e.Update(onBattery(p, 6600, 300))
	}
	if l := e.Estimate().Level; l != LevelCritical {
		t.Errorf("unplugged at 6600 mV: level %s", l)
	}
}

func TestUSBOnlyNeverShutsDown(t *testing.T) {
	p := mustLookup(t, "usb-only")
	e := NewEstimator(p, Options{})
	if e.Estimate().Level != LevelOK {
		t.Fatal("usb-only starts not ok")
	}
	for _, s := range []Sample{{}, {Valid: true, BatteryPresent: true, VBATmV: 5000}, {Valid: true, VBATmV: 0}} {
		for range 20 {
			e.Update(s)
		}
	}
	if got := e.Estimate(); got.Level != LevelOK || got.PercentKnown {
		t.Errorf("usb-only: %+v", got)
	}
}

func TestPercentInterpolation(t *testing.T) {
	p := mustLookup(t, "ansmann-2s1p")
	for _, tc := range []struct {
		mv   float64
		want float64
	}{
		{9000, 100}, {8100, 100}, {7950, 87.5}, {7800, 75}, {7600, 62.5}, {7400, 50},
		{7200, 37.5}, {7000, 25}, {6850, 12.5}, {6700, 0}, {5000, 0},
	} {
		if got := p.Percent(tc.mv); got != tc.want {
			t.Errorf("Percent(%v) = %v, want %v", tc.mv, got, tc.want)
		}
	}
}

func TestProfileValidation(t *testing.T) {
	for _, n := range Names() {
		if err := mustLookup(t, n).Validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	good := mustLookup(t, "ansmann-2s1p")
	for name, mod := range map[string]func(*Profile){
		"overcharge":        func(p *Profile) { p.ChargeVoltageMV = 8500 },
		"3S limit on 2S":    func(p *Profile) { p.ChargeVoltageMV = 12600 },
		"too low":           func(p *Profile) { p.ChargeVoltageMV = 6000 },
		"no cells":          func(p *Profile) { p.Cells = 0 },
		"rising table":      func(p *Profile) { p.VoltageMV = [5]int{7800, 8100, 7400, 7000, 6700} },
		"flat table":        func(p *Profile) { p.VoltageMV = [5]int{8100, 7800, 7800, 7000, 6700} },
		"full above limit":  func(p *Profile) { p.VoltageMV[0] = 8450 },
		"empty too low":     func(p *Profile) { p.VoltageMV[4] = 4000 },
		"shutdown > warn":   func(p *Profile) { p.ShutdownMV, p.WarningMV = 7100, 7000 },
		"shutdown below 0%": func(p *Profile) { p.ShutdownMV = 6600 },
		"no thresholds":     func(p *Profile) { p.ShutdownMV, p.WarningMV = 0, 0 },
		"resistance":        func(p *Profile) { p.InternalResistanceMilliohm = -1 },
		"no name":           func(p *Profile) { p.Name = "" },
	} {
		p := good
		mod(&p)
		if err := p.Validate(); !errors.Is(err, ErrImplausible) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestDecode(t *testing.T) {
	p, err := Decode(strings.NewReader(`{"name":"my-pack","cells":2,"charge_voltage_mv":8300,
		"voltage_mv":[8200,7800,7400,7000,6500],"warning_mv":6900,"shutdown_mv":6600,"internal_resistance_mohm":120}`))
	if err != nil || p.ChargeVoltageMV != 8300 {
		t.Fatalf("%+v %v", p, err)
	}
	for _, in := range []string{
		`{"name":"x","cells":2,"charge_voltage_mv":8800,"voltage_mv":[8200,7800,7400,7000,6500],"warning_mv":6900,"shutdown_mv":6600}`,
		`{"name":"x","colour":"red"}`,
		`not json`,
	} {
		if _, err := Decode(strings.NewReader(in)); err == nil {
			t.Errorf("accepted %s", in)
		}
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("unknown profile accepted")
	}
}
