// Package bq25792 drives the TI BQ25792 buck-boost battery charger found on
// the MuPiHAT battery board (I²C bus 1, address 0x6B).
//
// # Datasheet
//
// TI SLUSDG1C, "BQ25792 I2C Controlled, 1-4 Cell, 5-A Buck-Boost Battery
// Charger", June 2020, revised August 2022:
// https://www.ti.com/lit/ds/symlink/bq25792.pdf. Section numbers in comments
// refer to §9.5 "Register Maps" of that revision.
//
// # Register map quirks
//
// 16-bit registers are big endian: the high byte lives at the register
// address and the low byte at address+1, so ReadRegU16BE(0x3B) returns VBAT.
// The ADC results for IBUS, IBAT and TDIE are two's complement. IBAT reports
// discharge current only when EN_IBAT (REG14[5]) is set, which Init does.
//
// The chip has no fuel gauge; state of charge is estimated elsewhere from
// the battery voltage.
//
// # Safety
//
// VREG, the charge voltage limit, decides whether a lithium pack is
// overcharged. Init disables charging first, writes VREG only when it is
// inside the limit the caller passed (derived from the battery profile), reads
// it back and enables charging only after the read-back matched. CheckLimits
// repeats that check at run time. The I²C watchdog (REG10) resets the chip's
// configuration when it is not fed; call Feed well within Watchdog.
//
// # Bus
//
// The driver needs only byte and big-endian word register access (Bus), which
// github.com/d2r2/go-i2c's *i2c.I2C provides. Package bq25792test replays
// recorded register traffic for tests and records it on real hardware.
package bq25792
