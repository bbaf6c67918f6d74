package bq25792

import (
	"fmt"
	"time"
)

// Register addresses (datasheet Table 9-12).
const (
	regChargeVoltage   = 0x01 // REG01_Charge_Voltage_Limit, 16 bit (§9.5.1.2)
	regChargeCurrent   = 0x03 // REG03_Charge_Current_Limit, 16 bit (§9.5.1.3)
	regInputCurrent    = 0x06 // REG06_Input_Current_Limit, 16 bit (§9.5.1.5)
	regTermination     = 0x09 // REG09_Termination_Control (§9.5.1.7)
	regChargerControl0 = 0x0F // REG0F_Charger_Control_0 (§9.5.1.12)
	regChargerControl1 = 0x10 // REG10_Charger_Control_1 (§9.5.1.13)
	regChargerControl5 = 0x14 // REG14_Charger_Control_5 (§9.5.1.17)
	regTemperature     = 0x16 // REG16_Temperature_Control (§9.5.1.19)
	regStatus0         = 0x1B // REG1B_Charger_Status_0 (§9.5.1.23)
	regStatus1         = 0x1C // REG1C_Charger_Status_1 (§9.5.1.24)
	regStatus2         = 0x1D // REG1D_Charger_Status_2 (§9.5.1.25)
	regMaskFirst       = 0x28 // REG28_Charger_Mask_0 … REG2D_FAULT_Mask_1
	regMaskLast        = 0x2D
	regADCControl      = 0x2E // REG2E_ADC_Control (§9.5.1.42)
	regIBUS            = 0x31 // REG31_IBUS_ADC, 16 bit (§9.5.1.45)
	regIBAT            = 0x33 // REG33_IBAT_ADC, 16 bit (§9.5.1.46)
	regVBUS            = 0x35 // REG35_VBUS_ADC, 16 bit (§9.5.1.47)
	regVBAT            = 0x3B // REG3B_VBAT_ADC, 16 bit (§9.5.1.50)
	regVSYS            = 0x3D // REG3D_VSYS_ADC, 16 bit (§9.5.1.51)
	regTDIE            = 0x41 // REG41_TDIE_ADC, 16 bit (§9.5.1.53)
	regPartInfo        = 0x48 // REG48_Part_Information (§9.5.1.57)
)

// Bit fields.
const (
	termRegRst = 1 << 6 // REG09[6] REG_RST: reset all registers to POR; self-clearing.

	ctrl0EnChg  = 1 << 5 // REG0F[5] EN_CHG, POR 1.
	ctrl0EnTerm = 1 << 1 // REG0F[1] EN_TERM, POR 1.

	ctrl1WdRst        = 1 << 3 // REG10[3] WD_RST: restart the watchdog; self-clearing.
	ctrl1WatchdogMask = 0x07   // REG10[2:0] WATCHDOG, POR 5h (40 s).

	ctrl5EnIbat = 1 << 5 // REG14[5] EN_IBAT: measure discharge current too.

	tempTregMask  = 0xC0 // REG16[7:6] TREG: 0h 60 °C, 1h 80 °C, 2h 100 °C, 3h 120 °C.
	tempTshutMask = 0x30 // REG16[5:4] TSHUT: 0h 150 °C, 1h 130 °C, 2h 120 °C, 3h 85 °C.
	tempTreg100C  = 2 << 6
	tempTshut120C = 2 << 4

	status0VbusPresent = 1 << 0 // REG1B[0] VBUS_PRESENT_STAT.
	status0PowerGood   = 1 << 3 // REG1B[3] PG_STAT.
	status0WdExpired   = 1 << 5 // REG1B[5] WD_STAT: the watchdog expired and reset the configuration.

	status1ChgStatShift  = 5    // REG1C[7:5] CHG_STAT.
	status1VbusStatMask  = 0x1E // REG1C[4:1] VBUS_STAT.
	status1VbusStatShift = 1

	status2VbatPresent = 1 << 0 // REG1D[0] VBAT_PRESENT_STAT (VBAT > VBAT_UVLOZ).

	// REG2E: ADC_EN=1, ADC_RATE=0 (continuous), ADC_SAMPLE=0h (15 bit
	// effective), no averaging. The POR value 0x30 leaves the ADC off.
	adcContinuous15Bit = 0x80

	partReservedMask = 0xC0 // REG48[7:6] reserved, read 0.
	partPNMask       = 0x38 // REG48[5:3] PN.
	partPNShift      = 3
	partRevMask      = 0x07 // REG48[2:0] DEV_REV.
)

// Scales and ranges (register descriptions in §9.5.1).
const (
	vregStepMV  = 10 // VREG: 10 mV/LSB, 3000–18800 mV, 11 bits.
	vregMinMV   = 3000
	vregMaxMV   = 18800
	vregMask    = 0x07FF
	ichgStepMA  = 10 // ICHG: 10 mA/LSB, 50–5000 mA, 9 bits.
	ichgMinMA   = 50
	ichgMaxMA   = 5000
	ichgMask    = 0x01FF
	iindpmStep  = 10 // IINDPM: 10 mA/LSB, 100–3300 mA, 9 bits.
	iindpmMinMA = 100
	iindpmMaxMA = 3300
	iindpmMask  = 0x01FF
	tdieHalfC   = 2 // TDIE: 0.5 °C/LSB, two's complement.
)

// Watchdog is the I²C watchdog period Init programs (REG10 WATCHDOG=7h).
// Feed must run well within it, or the chip restores its POR configuration.
const Watchdog = 160 * time.Second

const watchdog160s = 7

// VREGRaw converts a charge voltage limit to its REG01 value. It rejects
// values the register cannot hold or that are not a whole step, so a
// rounding error can never raise the limit.
func VREGRaw(mv int) (uint16, error) {
	if mv < vregMinMV || mv > vregMaxMV || mv%vregStepMV != 0 {
		return 0, fmt.Errorf("charge voltage %d mV: %w", mv, ErrOutOfRange)
	}
	return uint16(mv / vregStepMV), nil
}

// VREGMillivolts converts a REG01 value to millivolts.
func VREGMillivolts(raw uint16) int { return int(raw&vregMask) * vregStepMV }

// ICHGRaw converts a charge current limit to its REG03 value.
func ICHGRaw(ma int) (uint16, error) {
	if ma < ichgMinMA || ma > ichgMaxMA || ma%ichgStepMA != 0 {
		return 0, fmt.Errorf("charge current %d mA: %w", ma, ErrOutOfRange)
	}
	return uint16(ma / ichgStepMA), nil
}

// ICHGMilliamps converts a REG03 value to milliamps.
func ICHGMilliamps(raw uint16) int { return int(raw&ichgMask) * ichgStepMA }

// IINDPMRaw converts an input current limit to its REG06 value.
func IINDPMRaw(ma int) (uint16, error) {
	if ma < iindpmMinMA || ma > iindpmMaxMA || ma%iindpmStep != 0 {
		return 0, fmt.Errorf("input current limit %d mA: %w", ma, ErrOutOfRange)
	}
	return uint16(ma / iindpmStep), nil
}

// IINDPMMilliamps converts a REG06 value to milliamps.
func IINDPMMilliamps(raw uint16) int { return int(raw&iindpmMask) * iindpmStep }

// CurrentMilliamps converts an IBUS or IBAT ADC result (1 mA/LSB, two's
// complement; IBAT is positive while charging).
func CurrentMilliamps(raw uint16) int { return int(int16(raw)) }

// VoltageMillivolts converts a VBUS, VBAT or VSYS ADC result (1 mV/LSB).
func VoltageMillivolts(raw uint16) int { return int(raw) }

// DieCelsius converts a TDIE ADC result (0.5 °C/LSB, two's complement).
func DieCelsius(raw uint16) float64 { return float64(int16(raw)) / tdieHalfC }

// ChargeStatus is REG1C CHG_STAT.
type ChargeStatus uint8

// CHG_STAT values (§9.5.1.24).
const (
	NotCharging   ChargeStatus = 0
	TrickleCharge ChargeStatus = 1
	PreCharge     ChargeStatus = 2
	FastCharge    ChargeStatus = 3 // constant current
	TaperCharge   ChargeStatus = 4 // constant voltage
	reservedChg   ChargeStatus = 5
	TopOff        ChargeStatus = 6 // top-off timer running
	ChargeDone    ChargeStatus = 7 // termination done
)

// Charging reports whether current flows into the battery.
func (c ChargeStatus) Charging() bool {
	switch c {
	case TrickleCharge, PreCharge, FastCharge, TaperCharge, TopOff:
		return true
	}
	return false
}

// String returns the status as a stable token, used on the wire.
func (c ChargeStatus) String() string {
	switch c {
	case NotCharging:
		return "not_charging"
	case TrickleCharge:
		return "trickle_charge"
	case PreCharge:
		return "pre_charge"
	case FastCharge:
		return "fast_charge"
	case TaperCharge:
		return "taper_charge"
	case TopOff:
		return "top_off"
	case ChargeDone:
		return "charge_done"
	}
	return "reserved"
}

// VBUSStatus is REG1C VBUS_STAT: what the charger detected on its input.
type VBUSStatus uint8

// String returns the status as a stable token.
func (v VBUSStatus) String() string {
	switch v {
	case 0x0:
		return "no_input"
	case 0x1:
		return "usb_sdp"
	case 0x2:
		return "usb_cdp"
	case 0x3:
		return "usb_dcp"
	case 0x4:
		return "hvdcp"
	case 0x5:
		return "unknown_adapter"
	case 0x6:
		return "non_standard_adapter"
	case 0x7:
		return "otg"
	case 0x8:
		return "not_qualified_adapter"
	case 0xB:
		return "vbus_direct"
	}
	return "reserved"
}

// PartInfo is REG48.
type PartInfo uint8

// Number is the PN field.
func (p PartInfo) Number() uint8 { return uint8(p&partPNMask) >> partPNShift }

// Revision is the DEV_REV field.
func (p PartInfo) Revision() uint8 { return uint8(p & partRevMask) }

// String names the part.
func (p PartInfo) String() string {
	name := "BQ2579x"
	switch p.Number() {
	case 1:
		name = "BQ25792"
	case 3:
		name = "BQ25798"
	}
	return fmt.Sprintf("%s (PN %d, rev %d)", name, p.Number(), p.Revision())
}
