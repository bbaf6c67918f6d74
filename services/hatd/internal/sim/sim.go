// Package sim emulates a MuPiHAT: a BQ25792's register map in front of a
// simple 2S lithium-ion pack model. It implements bq25792.Bus, so hatd runs
// its real driver, estimator and API against it: `hatd -sim` on a
// development machine, and tests that drive the battery to any level.
package sim

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Registers the emulation gives behaviour to; the rest is plain memory.
const (
	regVREG    = 0x01
	regICHG    = 0x03
	regIINDPM  = 0x06
	regTerm    = 0x09
	regCtrl0   = 0x0F
	regCtrl1   = 0x10
	regStatus0 = 0x1B
	regStatus1 = 0x1C
	regStatus2 = 0x1D
	regADC     = 0x2E
	regIBUS    = 0x31
	regIBAT    = 0x33
	regVBUS    = 0x35
	regVAC1    = 0x37
	regVBAT    = 0x3B
	regVSYS    = 0x3D
	regTDIE    = 0x41
	nRegs      = 0x49
)

// por is the power-on-reset register file of a 2S board (PROG pin), from
// the datasheet's register descriptions. Part information 0x09: BQ25792
// rev 1.
var por = func() [nRegs]byte {
	var r [nRegs]byte
	r[0x00] = 0x12                // VSYSMIN 7 V
	r[0x01], r[0x02] = 0x03, 0x48 // VREG 8.4 V
	r[0x03], r[0x04] = 0x00, 0xC8 // ICHG 2 A
	r[0x05] = 0x24                // VINDPM 3.6 V
	r[0x06], r[0x07] = 0x01, 0x2C // IINDPM 3 A
	r[0x08] = 0xC3                // VBAT_LOWV, IPRECHG 120 mA
	r[0x09] = 0x05                // ITERM 200 mA
	r[0x0A] = 0x63                // 2S, 1024 ms, VRECHG 200 mV
	r[0x0F] = 0xA2                // EN_CHG, EN_TERM
	r[0x10] = 0x05                // watchdog 40 s
	r[0x11] = 0x40
	r[0x14] = 0x16
	r[0x16] = 0xC0
	r[0x2E] = 0x30 // ADC off
	r[0x48] = 0x09
	return r
}()

// Options configure the board. Zero values mean the defaults.
type Options struct {
	// Speed runs the battery this many times faster than the wall clock.
	Speed float64
	// CapacityMAh of the pack; default 2600.
	CapacityMAh float64
	// SoC is the initial state of charge, 0–1; default 0.8.
	SoC float64
	// LoadMA is what the box draws; default 600.
	LoadMA int
	// ExternalPower plugs in a 5 V USB supply.
	ExternalPower bool
	// Seed makes the sensor noise repeatable.
	Seed uint64
	// Now is the wall clock; default time.Now.
	Now func() time.Time
}

// internal resistance of the simulated pack, in ohms.
const packOhm = 0.15

// Board is the simulated battery board. It is safe for concurrent use.
type Board struct {
	mu    sync.Mutex
	regs  [nRegs]byte
	now   func() time.Time
	last  time.Time // wall time the model last advanced to
	speed float64
	rng   *rand.Rand

	capMAh  float64
	soc     float64
	loadMA  float64
	ext     bool
	ibatMA  float64 // + charging
	chgStat byte
	done    bool

	wdLeft  time.Duration // wall time until the watchdog expires
	wdStat  bool
	elapsed time.Duration // simulated time, for reports
}

// New returns a board in its power-on state.
func New(o Options) *Board {
	if o.Speed <= 0 {
		o.Speed = 1
	}
	if o.CapacityMAh <= 0 {
		o.CapacityMAh = 2600
	}
	if o.SoC <= 0 {
		o.SoC = 0.8
	}
	if o.LoadMA <= 0 {
		o.LoadMA = 600
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	b := &Board{
		regs: por, now: o.Now, last: o.Now(), speed: o.Speed,
		rng:    rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed)),
		capMAh: o.CapacityMAh, soc: min(o.SoC, 1), loadMA: float64(o.LoadMA), ext: o.ExternalPower,
	}
	b.wdLeft = b.watchdog()
	b.settle()
	return b
}

// ocvPoints is the resting voltage of a 2S pack over its state of charge.
var ocvPoints = []struct{ soc, mv float64 }{
	{0, 6000}, {0.03, 6500}, {0.08, 6800}, {0.2, 7000}, {0.45, 7400},
	{0.7, 7800}, {0.9, 8100}, {1, 8400},
}

func ocv(soc float64) float64 {
	if soc <= 0 {
		return ocvPoints[0].mv
	}
	for i := 1; i < len(ocvPoints); i++ {
		a, b := ocvPoints[i-1], ocvPoints[i]
		if soc <= b.soc {
			return a.mv + (b.mv-a.mv)*(soc-a.soc)/(b.soc-a.soc)
		}
	}
	return ocvPoints[len(ocvPoints)-1].mv
}

func (b *Board) u16(reg byte) uint16 { return uint16(b.regs[reg])<<8 | uint16(b.regs[reg+1]) }

func (b *Board) watchdog() time.Duration {
	return [...]time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second,
		20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second}[b.regs[regCtrl1]&7]
}

// sync brings the model up to the wall clock.
func (b *Board) sync() {
	now := b.now()
	wall := now.Sub(b.last)
	b.last = now
	if wall > 0 {
		b.run(wall, time.Duration(float64(wall)*b.speed))
	}
}

// run advances the watchdog by wall and the battery by sim.
func (b *Board) run(wall, sim time.Duration) {
	if wd := b.watchdog(); wd > 0 {
		b.wdLeft -= wall
		if b.wdLeft <= 0 {
			// Expiry restores the charge configuration, as on the chip.
			for _, r := range []byte{regVREG, regVREG + 1, regICHG, regICHG + 1, regIINDPM, regIINDPM + 1, regCtrl0, regCtrl1} {
				b.regs[r] = por[r]
			}
			b.wdStat = true
			b.wdLeft = b.watchdog()
		}
	}
	b.elapsed += sim
	for sim > 0 {
		step := min(sim, 10*time.Second)
		sim -= step
		b.settle()
		b.soc -= (b.loadMA*boolf(!b.ext) - b.ibatMA) * step.Hours() / b.capMAh
		b.soc = max(0, min(1, b.soc))
	}
	b.settle()
}

func boolf(v bool) float64 {
	if v {
		return 1
	}
	return 0
}

// settle sets the charge current and status for the present state.
func (b *Board) settle() {
	b.ibatMA, b.chgStat = 0, 0
	if !b.ext || b.regs[regCtrl0]&0x20 == 0 {
		b.done = false
		return
	}
	vreg := float64(b.u16(regVREG)&0x7FF) * 10
	ichg := float64(b.u16(regICHG)&0x1FF) * 10
	iterm := float64(b.regs[regTerm]&0x1F) * 40
	if b.done && ocv(b.soc) < vreg-200-100 {
		b.done = false // recharge threshold (VRECHG) crossed
	}
	if b.done {
		b.chgStat = 7
		return
	}
	v := ocv(b.soc)
	i := ichg
	b.chgStat = 3
	if v+i*packOhm > vreg {
		i = max(0, (vreg-v)/packOhm)
		b.chgStat = 4
	}
	if i < iterm && b.regs[regCtrl0]&0x02 != 0 {
		b.done, b.chgStat, i = true, 7, 0
	}
	b.ibatMA = i
}

// Reading returns the instantaneous electrical state, with sensor noise and
// occasional load peaks from the amplifier.
func (b *Board) reading() (vbat, ibat, vbus, ibus float64) {
	load := b.loadMA + b.rng.Float64()*100 - 50
	if b.rng.IntN(20) == 0 {
		load += 1500
	}
	if b.ext {
		ibat = b.ibatMA
		vbus = 5050 + b.rng.Float64()*40 - 20
	} else {
		ibat = -load
	}
	vbat = ocv(b.soc) + ibat*packOhm + b.rng.Float64()*16 - 8
	if b.ext {
		ibus = (load + max(0, ibat)) * vbat / vbus / 0.9
	}
	return vbat, ibat, vbus, ibus
}

func (b *Board) read(reg byte) byte {
	switch reg {
	case regStatus0:
		var v byte
		if b.ext {
			v |= 1<<0 | 1<<1 | 1<<3 // VBUS present, AC1 present, power good
		}
		if b.wdStat {
			v |= 1 << 5
		}
		return v
	case regStatus1:
		vbusStat := byte(0)
		if b.ext {
			vbusStat = 3 // USB DCP
		}
		return b.chgStat<<5 | vbusStat<<1
	case regStatus2:
		return 1 // battery present
	}
	return b.regs[reg]
}

func (b *Board) read16(reg byte) uint16 {
	if reg < regIBUS || reg > regTDIE+1 {
		return uint16(b.read(reg))<<8 | uint16(b.read(reg+1))
	}
	if b.regs[regADC]&0x80 == 0 {
		return 0 // ADC off: results stay at their reset value
	}
	vbat, ibat, vbus, ibus := b.reading()
	switch reg {
	case regIBUS:
		return uint16(int16(math.Round(ibus)))
	case regIBAT:
		return uint16(int16(math.Round(ibat)))
	case regVBUS, regVAC1:
		return uint16(math.Round(vbus))
	case regVBAT:
		return uint16(math.Round(vbat))
	case regVSYS:
		return uint16(math.Round(max(vbat, 7000)))
	case regTDIE:
		c := 32 + 8*boolf(b.ibatMA > 0)*b.ibatMA/2000
		return uint16(int16(math.Round(c * 2)))
	}
	return 0
}

func (b *Board) write(reg, v byte) {
	if reg >= nRegs || (reg >= regStatus0 && reg <= 0x27) || (reg >= regIBUS && reg < nRegs) {
		return // read-only
	}
	switch reg {
	case regTerm:
		if v&0x40 != 0 {
			b.regs = por
			b.wdStat = false
			b.wdLeft = b.watchdog()
			b.done = false
			return
		}
	case regCtrl1:
		if v&0x08 != 0 {
			b.wdStat = false
			v &^= 0x08
			b.regs[reg] = v
			b.wdLeft = b.watchdog()
			return
		}
		if v&7 != b.regs[reg]&7 {
			b.regs[reg] = v
			b.wdLeft = b.watchdog()
			return
		}
	}
	b.regs[reg] = v
}

// ReadRegU8 implements bq25792.Bus.
func (b *Board) ReadRegU8(reg byte) (byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sync()
	if reg >= nRegs {
		return 0, nil
	}
	return b.read(reg), nil
}

// WriteRegU8 implements bq25792.Bus.
func (b *Board) WriteRegU8(reg, v byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sync()
	b.write(reg, v)
	b.settle()
	return nil
}

// ReadRegU16BE implements bq25792.Bus.
func (b *Board) ReadRegU16BE(reg byte) (uint16, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sync()
	if reg+1 >= nRegs {
		return 0, nil
	}
	return b.read16(reg), nil
}

// WriteRegU16BE implements bq25792.Bus.
func (b *Board) WriteRegU16BE(reg byte, v uint16) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sync()
	if reg+1 < nRegs {
		b.write(reg, byte(v>>8))
		b.write(reg+1, byte(v))
	}
	b.settle()
	return nil
}

// State is what the simulation is doing, for tests and the control API.
type State struct {
	SoC           float64 `json:"soc"`
	RestingMV     int     `json:"resting_mv"`
	ChargeMA      int     `json:"charge_ma"`
	LoadMA        int     `json:"load_ma"`
	ExternalPower bool    `json:"external_power"`
	Speed         float64 `json:"speed"`
	ChargeVREGmV  int     `json:"vreg_mv"`
	Charging      bool    `json:"charging"`
	SimulatedS    float64 `json:"simulated_s"`
}

// State reports the simulation.
func (b *Board) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sync()
	return State{
		SoC: b.soc, RestingMV: int(ocv(b.soc)), ChargeMA: int(b.ibatMA), LoadMA: int(b.loadMA),
		ExternalPower: b.ext, Speed: b.speed, ChargeVREGmV: int(b.u16(regVREG)&0x7FF) * 10,
		Charging: b.ibatMA > 0, SimulatedS: b.elapsed.Seconds(),
	}
}

// Control changes the simulation; nil fields stay as they are.
type Control struct {
	SoC           *float64 `json:"soc,omitempty"`
	LoadMA        *int     `json:"load_ma,omitempty"`
	ExternalPower *bool    `json:"external_power,omitempty"`
	Speed         *float64 `json:"speed,omitempty"`
	// AdvanceS runs the battery forward by this many simulated seconds.
	AdvanceS *float64 `json:"advance_s,omitempty"`
}

// Apply applies c after checking all of it.
func (b *Board) Apply(c Control) error {
	if c.SoC != nil && (*c.SoC < 0 || *c.SoC > 1 || math.IsNaN(*c.SoC)) {
		return errorf("soc must be between 0 and 1")
	}
	if c.LoadMA != nil && (*c.LoadMA < 0 || *c.LoadMA > 5000) {
		return errorf("load_ma must be between 0 and 5000")
	}
	if c.Speed != nil && (*c.Speed <= 0 || *c.Speed > 1e6 || math.IsNaN(*c.Speed)) {
		return errorf("speed must be above 0 and at most 1000000")
	}
	if c.AdvanceS != nil && (*c.AdvanceS < 0 || *c.AdvanceS > 30*24*3600 || math.IsNaN(*c.AdvanceS)) {
		return errorf("advance_s must be between 0 and 2592000")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sync()
	if c.SoC != nil {
		b.soc = *c.SoC
		b.done = false
	}
	if c.LoadMA != nil {
		b.loadMA = float64(*c.LoadMA)
	}
	if c.ExternalPower != nil {
		b.ext = *c.ExternalPower
	}
	if c.Speed != nil {
		b.speed = *c.Speed
	}
	if c.AdvanceS != nil {
		b.run(0, time.Duration(*c.AdvanceS*float64(time.Second)))
	}
	b.settle()
	return nil
}

// errorf is a control out of range: the caller's mistake.
func errorf(s string) error { return fault.New(fault.Invalid, "sim: %s", s) }
