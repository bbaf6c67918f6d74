package bq25792

import (
	"errors"
	"fmt"
	"sync"
)

// Bus is the register access the driver needs. *i2c.I2C from
// github.com/d2r2/go-i2c, bound to the chip's address, satisfies it.
type Bus interface {
	ReadRegU8(reg byte) (byte, error)
	WriteRegU8(reg byte, value byte) error
	ReadRegU16BE(reg byte) (uint16, error)
	WriteRegU16BE(reg byte, value uint16) error
}

// Errors callers test with errors.Is.
var (
	// ErrNoDevice: nothing that looks like a BQ2579x answered.
	ErrNoDevice = errors.New("bq25792: no charger answered")
	// ErrOutOfRange: a setting the register cannot hold.
	ErrOutOfRange = errors.New("out of range")
	// ErrImplausible: charge limits that do not fit the battery; charging
	// stays disabled.
	ErrImplausible = errors.New("implausible charge limits")
	// ErrVerify: a register did not read back what was written; charging
	// stays disabled.
	ErrVerify = errors.New("read-back mismatch")
)

// Per-cell charge voltage bounds for lithium-ion cells. Above 4.2 V a
// standard cell is overcharged; far below 3.5 V the value is a typo.
const (
	maxCellMV = 4200
	minCellMV = 3500
)

// Opts configures the charger. The zero value of a field means its default.
type Opts struct {
	// Cells in series (1–4); default 2, as on the MuPiHAT.
	Cells int
	// ChargeVoltageMV is the charge voltage limit VREG. It is required when
	// EnableCharging is set and must not exceed Cells×4200 mV.
	ChargeVoltageMV int
	// ChargeCurrentMA is ICHG; 0 keeps the value the PROG pin selected.
	ChargeCurrentMA int
	// InputCurrentLimitMA is IINDPM; default 2200 mA.
	InputCurrentLimitMA int
	// EnableCharging turns the charger on after the limits verified. Off
	// for boards without a battery.
	EnableCharging bool
}

// DefaultOpts holds the defaults; the MuPiHAT's medium input profile.
var DefaultOpts = Opts{Cells: 2, InputCurrentLimitMA: 2200}

// Validate checks the options without touching the bus.
func (o Opts) Validate() error {
	if o.Cells < 1 || o.Cells > 4 {
		return fmt.Errorf("bq25792: %d cells: %w", o.Cells, ErrImplausible)
	}
	if _, err := IINDPMRaw(o.InputCurrentLimitMA); err != nil {
		return fmt.Errorf("bq25792: %w", err)
	}
	if o.ChargeCurrentMA != 0 {
		if _, err := ICHGRaw(o.ChargeCurrentMA); err != nil {
			return fmt.Errorf("bq25792: %w", err)
		}
	}
	if !o.EnableCharging && o.ChargeVoltageMV == 0 {
		return nil
	}
	if o.ChargeVoltageMV > o.Cells*maxCellMV || o.ChargeVoltageMV < o.Cells*minCellMV {
		return fmt.Errorf("bq25792: charge voltage %d mV for %d cells (allowed %d–%d mV): %w",
			o.ChargeVoltageMV, o.Cells, o.Cells*minCellMV, o.Cells*maxCellMV, ErrImplausible)
	}
	if _, err := VREGRaw(o.ChargeVoltageMV); err != nil {
		return fmt.Errorf("bq25792: %w", err)
	}
	return nil
}

func (o Opts) withDefaults() Opts {
	if o.Cells == 0 {
		o.Cells = DefaultOpts.Cells
	}
	if o.InputCurrentLimitMA == 0 {
		o.InputCurrentLimitMA = DefaultOpts.InputCurrentLimitMA
	}
	return o
}

// Dev is one BQ25792. Its methods are safe for concurrent use; bus access is
// serialised because go-i2c's register reads are two separate transfers.
type Dev struct {
	mu   sync.Mutex
	bus  Bus
	opts Opts
	part PartInfo
}

// New checks that a BQ2579x answers on bus and configures it (see Init).
// Errors wrapping ErrNoDevice mean the board is absent.
func New(bus Bus, opts *Opts) (*Dev, error) {
	o := DefaultOpts
	if opts != nil {
		o = opts.withDefaults()
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	d := &Dev{bus: bus, opts: o}
	v, err := bus.ReadRegU8(regPartInfo)
	if err != nil {
		return nil, fmt.Errorf("%w: read part information: %w", ErrNoDevice, err)
	}
	if v&partReservedMask != 0 || v == 0 {
		return nil, fmt.Errorf("%w: part information 0x%02x", ErrNoDevice, v)
	}
	d.part = PartInfo(v)
	if err := d.Init(); err != nil {
		return nil, err
	}
	return d, nil
}

// Part reports what REG48 identified.
func (d *Dev) Part() PartInfo { return d.part }

// String implements fmt.Stringer.
func (d *Dev) String() string { return d.part.String() }

// Init resets the chip and programs it: soft reset; charging off; watchdog
// 160 s; VREG, ICHG and IINDPM written and read back; TREG 100 °C, TSHUT
// 120 °C; ADC continuous at 15 bit; discharge current sensing; interrupts
// masked; then charging on if requested. Run it again after the watchdog
// expired, because expiry restores the POR configuration.
func (d *Dev) Init() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.setBits(regTermination, termRegRst, termRegRst); err != nil {
		return d.wrap("soft reset", err)
	}
	// POR enables charging at the PROG-pin default; keep it off until our
	// own limit is verified.
	if err := d.setBits(regChargerControl0, ctrl0EnChg, 0); err != nil {
		return d.wrap("disable charging", err)
	}
	if err := d.setBits(regChargerControl1, ctrl1WatchdogMask, watchdog160s); err != nil {
		return d.wrap("set watchdog", err)
	}
	if d.opts.ChargeVoltageMV != 0 {
		raw, _ := VREGRaw(d.opts.ChargeVoltageMV) // validated in New
		if err := d.writeVerify16(regChargeVoltage, raw, vregMask); err != nil {
			return d.wrap("set charge voltage", err)
		}
	}
	if d.opts.ChargeCurrentMA != 0 {
		raw, _ := ICHGRaw(d.opts.ChargeCurrentMA)
		if err := d.writeVerify16(regChargeCurrent, raw, ichgMask); err != nil {
			return d.wrap("set charge current", err)
		}
	}
	raw, _ := IINDPMRaw(d.opts.InputCurrentLimitMA)
	if err := d.writeVerify16(regInputCurrent, raw, iindpmMask); err != nil {
		return d.wrap("set input current limit", err)
	}
	if err := d.setBits(regTemperature, tempTregMask|tempTshutMask, tempTreg100C|tempTshut120C); err != nil {
		return d.wrap("set thermal limits", err)
	}
	if err := d.bus.WriteRegU8(regADCControl, adcContinuous15Bit); err != nil {
		return d.wrap("enable ADC", err)
	}
	if err := d.setBits(regChargerControl5, ctrl5EnIbat, ctrl5EnIbat); err != nil {
		return d.wrap("enable IBAT sensing", err)
	}
	for r := byte(regMaskFirst); r <= regMaskLast; r++ {
		if err := d.bus.WriteRegU8(r, 0xFF); err != nil {
			return d.wrap(fmt.Sprintf("mask interrupts 0x%02x", r), err)
		}
	}
	if !d.opts.EnableCharging {
		return nil
	}
	if err := d.setBits(regChargerControl0, ctrl0EnChg|ctrl0EnTerm, ctrl0EnChg|ctrl0EnTerm); err != nil {
		return d.wrap("enable charging", err)
	}
	return nil
}

// Feed restarts the I²C watchdog.
func (d *Dev) Feed() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.setBits(regChargerControl1, ctrl1WdRst, ctrl1WdRst); err != nil {
		return d.wrap("feed watchdog", err)
	}
	return nil
}

// CheckLimits reads VREG back. If it is above the configured limit (a
// glitch, or another program on the bus), charging is switched off and an
// error wrapping ErrVerify is returned.
func (d *Dev) CheckLimits() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	raw, err := d.bus.ReadRegU16BE(regChargeVoltage)
	if err != nil {
		return d.wrap("read charge voltage", err)
	}
	limit := d.opts.ChargeVoltageMV
	if !d.opts.EnableCharging || VREGMillivolts(raw) <= limit {
		return nil
	}
	if err := d.setBits(regChargerControl0, ctrl0EnChg, 0); err != nil {
		return d.wrap("disable charging", err)
	}
	return fmt.Errorf("bq25792: charge voltage reads %d mV, limit %d mV, charging disabled: %w",
		VREGMillivolts(raw), limit, ErrVerify)
}

// Reading is one sample of the charger's status and ADC.
type Reading struct {
	VBUSPresent     bool
	PowerGood       bool
	WatchdogExpired bool
	BatteryPresent  bool
	Charge          ChargeStatus
	VBUS            VBUSStatus
	VBUSmV          int
	VBATmV          int
	VSYSmV          int
	IBUSmA          int
	IBATmA          int // positive while charging
	DieC            float64
}

// Sense reads status and ADC registers.
func (d *Dev) Sense() (Reading, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var r Reading
	s0, err := d.bus.ReadRegU8(regStatus0)
	if err != nil {
		return r, d.wrap("read status 0", err)
	}
	s1, err := d.bus.ReadRegU8(regStatus1)
	if err != nil {
		return r, d.wrap("read status 1", err)
	}
	s2, err := d.bus.ReadRegU8(regStatus2)
	if err != nil {
		return r, d.wrap("read status 2", err)
	}
	r.VBUSPresent = s0&status0VbusPresent != 0
	r.PowerGood = s0&status0PowerGood != 0
	r.WatchdogExpired = s0&status0WdExpired != 0
	r.Charge = ChargeStatus(s1 >> status1ChgStatShift)
	r.VBUS = VBUSStatus((s1 & status1VbusStatMask) >> status1VbusStatShift)
	r.BatteryPresent = s2&status2VbatPresent != 0
	for _, m := range []struct {
		reg  byte
		name string
		set  func(uint16)
	}{
		{regIBUS, "IBUS", func(v uint16) { r.IBUSmA = CurrentMilliamps(v) }},
		{regIBAT, "IBAT", func(v uint16) { r.IBATmA = CurrentMilliamps(v) }},
		{regVBUS, "VBUS", func(v uint16) { r.VBUSmV = VoltageMillivolts(v) }},
		{regVBAT, "VBAT", func(v uint16) { r.VBATmV = VoltageMillivolts(v) }},
		{regVSYS, "VSYS", func(v uint16) { r.VSYSmV = VoltageMillivolts(v) }},
		{regTDIE, "TDIE", func(v uint16) { r.DieC = DieCelsius(v) }},
	} {
		v, err := d.bus.ReadRegU16BE(m.reg)
		if err != nil {
			return r, d.wrap("read "+m.name, err)
		}
		m.set(v)
	}
	return r, nil
}

// Halt switches charging off; the chip keeps powering the system.
func (d *Dev) Halt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.setBits(regChargerControl0, ctrl0EnChg, 0); err != nil {
		return d.wrap("disable charging", err)
	}
	return nil
}

// setBits writes (old &^ mask) | val, read-modify-write.
func (d *Dev) setBits(reg, mask, val byte) error {
	old, err := d.bus.ReadRegU8(reg)
	if err != nil {
		return err
	}
	return d.bus.WriteRegU8(reg, old&^mask|val&mask)
}

func (d *Dev) writeVerify16(reg byte, val, mask uint16) error {
	if err := d.bus.WriteRegU16BE(reg, val); err != nil {
		return err
	}
	got, err := d.bus.ReadRegU16BE(reg)
	if err != nil {
		return err
	}
	if got&mask != val {
		return fmt.Errorf("register 0x%02x wrote 0x%04x, reads 0x%04x: %w", reg, val, got, ErrVerify)
	}
	return nil
}

func (d *Dev) wrap(what string, err error) error {
	return fmt.Errorf("bq25792: %s: %w", what, err)
}
